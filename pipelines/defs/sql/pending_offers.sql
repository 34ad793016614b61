-- The raw offers of the batch's crawls (raw.batch_crawls), in crawl and file order: of two crawls
-- of the same offer and hour, the earlier one's row is kept.
select o.crawl_id, o.item_no, o.source, o.item
from raw.offers as o
inner join raw.batch_crawls as b on o.crawl_id = b.crawl_id
order by o.crawl_id, o.item_no
