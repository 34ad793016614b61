-- The earliest UTC day with observations loaded since $built_at (null: nothing new). Observations
-- are loaded by crawl; a crawl's normalized_at says when its rows joined `observations`
-- (raw.crawl_first_days is brought up to date first: cache_crawl_first_days.sql).
select min(d.first_day) as first_new_day
from raw.crawls as c
inner join raw.crawl_first_days as d
    on c.crawl_id = d.crawl_id and c.normalized_at = d.normalized_at
where c.normalized_at >= $built_at
