-- The crawls normalized since $built_at (a model's last build; for a published generation, the
-- earliest of the builds it holds), in the database the session uses: when, the first UTC day of
-- its observations as raw.crawl_first_days caches it (null: it has none), and whether that day is
-- cached at all (cache_crawl_first_days.sql adds the missing ones). crawl_first_days.py
-- first_new_day_since takes the first new day from these rows, for the runner and the publish.
-- Observations are loaded by crawl; a crawl's normalized_at says when its rows joined
-- `observations`.
select
    c.normalized_at,
    d.first_day,
    d.crawl_id is not null as cached
from raw.crawls as c
left join raw.crawl_first_days as d
    on c.crawl_id = d.crawl_id and c.normalized_at = d.normalized_at
where c.normalized_at >= cast($built_at as timestamptz)
