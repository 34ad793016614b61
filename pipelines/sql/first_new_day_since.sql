-- The earliest UTC day with observations loaded since $built_at (a model's build that a generation
-- last copied), as the model runner derives it (pipelines/warehouse/sql/first_new_day.sql), from
-- the attached working database `work`; and how many crawls loaded since have no cached first day
-- (then the day is unknown and the whole table is copied).
select
    min(d.first_day) as first_new_day,
    count(*) filter (where d.crawl_id is null) as uncached
from work.raw.crawls as c
left join work.raw.crawl_first_days as d
    on c.crawl_id = d.crawl_id and c.normalized_at = d.normalized_at
where c.normalized_at >= cast($built_at as timestamptz)
