-- The crawls this batch reads: every passing crawl not yet normalized, as they are now. A crawl
-- loaded after this moment is not in the batch: it stays pending for the next run.
insert into raw.batch_crawls (crawl_id, normalized_rows, quarantined_rows)
select
    crawl_id,
    0 as normalized_rows,
    0 as quarantined_rows
from raw.crawls
where passed and normalized_at is null
