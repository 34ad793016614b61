-- The first UTC day of the observations of every crawl normalized from $normalized_from to
-- $normalized_to and not yet in raw.crawl_first_days (or normalized again since: its old row is
-- dropped first, by uncache_crawl_first_days.sql), in one scan of `observations` from
-- $first_hour on: a writer passes the first hour it wrote (DuckDB then reads only the newest
-- row groups), the model runner's fallback the beginning of time. A crawl's rows join
-- `observations` in the transaction that sets its normalized_at, so the day does not change
-- afterwards; a crawl without rows gets a null day.
insert into raw.crawl_first_days (crawl_id, normalized_at, first_day)
with uncached as (
    select c.crawl_id, c.normalized_at
    from raw.crawls as c
    anti join raw.crawl_first_days as d on c.crawl_id = d.crawl_id
    where c.normalized_at between $normalized_from and $normalized_to
),

first_days as (
    select
        o.crawl_id,
        min(timezone('UTC', o.observed_hour))::date as first_day
    from observations as o
    where
        o.observed_hour >= $first_hour
        and o.crawl_id in (select u.crawl_id from uncached as u)
    group by o.crawl_id
)

select u.crawl_id, u.normalized_at, f.first_day
from uncached as u
left join first_days as f on u.crawl_id = f.crawl_id
