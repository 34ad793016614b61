-- Exactly the batch's crawls are done: when their rows joined `observations`, and how many of
-- their offers became observations. A crawl loaded after the batch was built is not among them:
-- it stays pending, and the next run normalizes it.
update raw.crawls as c set
    normalized_at = now(),
    normalized_rows = b.normalized_rows
from raw.batch_crawls as b
where c.crawl_id = b.crawl_id and c.passed and c.normalized_at is null
