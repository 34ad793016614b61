-- Every crawl of the attached working database `work` normalized since $built_at (the earliest of
-- the model builds a generation last copied): when, the first UTC day of its observations as the
-- model runner derives it (pipelines/warehouse/sql/crawls_since.sql; null: it has none), and
-- whether that day is cached at all (if not, the day is unknown and a model built before it is
-- copied whole). pipelines/generations.py takes each model's earliest day from these rows, one
-- read for every model.
select
    c.normalized_at,
    d.first_day,
    d.crawl_id is not null as cached
from work.raw.crawls as c
left join work.raw.crawl_first_days as d
    on c.crawl_id = d.crawl_id and c.normalized_at = d.normalized_at
where c.normalized_at >= cast($built_at as timestamptz)
