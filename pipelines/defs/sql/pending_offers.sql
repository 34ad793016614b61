-- The raw offers of passing crawls not yet normalized, in crawl and file order.
select o.crawl_id, o.item_no, o.source, o.item
from raw.offers as o
inner join raw.crawls as c using (crawl_id)
where c.passed and c.normalized_at is null
order by o.crawl_id, o.item_no
