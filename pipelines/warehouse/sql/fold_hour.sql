-- A folded model's first new hour: the earliest observed_hour of the observations loaded since
-- its last build ($built_at), all observed from $first_new_day (a UTC date) on: the bound lets
-- DuckDB skip older row groups. The runner sets it as the variable fold_hour (since_macros.sql).
select min(o.observed_hour) as first_hour
from observations as o
where
    o.observed_hour >= $first_new_day::date::timestamptz
    and o.crawl_id in (
        select c.crawl_id from raw.crawls as c
        where c.normalized_at >= $built_at
    )
