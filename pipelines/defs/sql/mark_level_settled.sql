-- The batch crawls whose new level a settlement let in (the registered frame `settled`:
-- crawl_id, level_settled_by): the blocking check on source levels leaves them out.
update raw.batch_crawls as b set level_settled_by = s.level_settled_by
from settled as s
where b.crawl_id = s.crawl_id
