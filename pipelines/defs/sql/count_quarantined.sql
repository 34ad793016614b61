-- Each batch crawl's refused offers, counted on its raw.crawls row when the batch is built (a
-- blocked batch's crawls show them too).
update raw.crawls as c set quarantined_rows = b.quarantined_rows
from raw.batch_crawls as b
where c.crawl_id = b.crawl_id
