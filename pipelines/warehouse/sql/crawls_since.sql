-- The crawls normalized since $built_at (a model's last build): how many are not yet in
-- raw.crawl_first_days (cache_crawl_first_days.sql adds them, then this runs again), and the
-- earliest UTC day of the observations of those that are: the first new day (null: nothing new).
-- Observations are loaded by crawl; a crawl's normalized_at says when its rows joined
-- `observations`.
select
    count(*) filter (where d.normalized_at is distinct from c.normalized_at) as uncached,
    min(d.first_day) filter (where d.normalized_at = c.normalized_at) as first_new_day
from raw.crawls as c
left join raw.crawl_first_days as d on c.crawl_id = d.crawl_id
where c.normalized_at >= $built_at
