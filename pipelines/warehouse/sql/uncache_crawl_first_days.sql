-- The cached first day of every crawl normalized again since $built_at (its normalized_at moved):
-- dropped, so that cache_crawl_first_days.sql finds it again (raw.crawl_first_days has no key
-- to replace it by).
delete from raw.crawl_first_days as d
using raw.crawls as c
where
    c.crawl_id = d.crawl_id and c.normalized_at >= $built_at
    and d.normalized_at <> c.normalized_at
