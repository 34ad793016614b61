-- What became of each batch crawl's offers (the registered frame `crawl_counts`).
update raw.batch_crawls as b set
    normalized_rows = n.normalized_rows,
    quarantined_rows = n.quarantined_rows
from crawl_counts as n
where b.crawl_id = n.crawl_id
