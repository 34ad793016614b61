-- The raw offers of one version's crawls (the registered frame `archive_offers`), their items
-- as JSON text, numbered from 0 per crawl in the version's line order.
insert into raw.offers (crawl_id, item_no, source, item)
select
    a.crawl_id,
    a.item_no,
    a.source,
    a.item::json as item
from archive_offers as a
