-- The keys a key-incremental model rebuilds: every {column} value of the observations loaded
-- since its last build ($built_at), all observed from $first_new_day (a UTC date) on: the bound
-- lets DuckDB skip older row groups. A temporary table, dropped after the build.
create or replace temporary table incremental_keys as
select distinct {column} as key
from observations as o
where o.observed_hour >= $first_new_day::date::timestamptz
    and o.crawl_id in (
        select c.crawl_id from raw.crawls as c
        where c.normalized_at >= $built_at
    )
