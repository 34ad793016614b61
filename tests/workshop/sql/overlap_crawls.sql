-- What the overlap probe counts of the crawls: marked normalized although none of their offers
-- became observations, or although their hour has no observations at all; left pending; marked.
with landed_hours as (
    select distinct
        source,
        observed_hour
    from observations
),

crawl_hours as (
    select distinct
        crawl_id,
        source,
        date_trunc('hour', (item ->> 'observed_at')::timestamptz) as observed_hour
    from raw.offers
),

hour_without_rows as (
    select distinct h.crawl_id
    from crawl_hours as h
    left join landed_hours as l
        on h.source = l.source and h.observed_hour = l.observed_hour
    where l.source is null
)

select
    count(*) filter (
        where c.normalized_at is not null and c.offers > 0
        and coalesce(c.normalized_rows, 0) = 0
    ) as normalized_with_0_rows,
    count(*) filter (
        where c.normalized_at is not null
        and c.crawl_id in (select w.crawl_id from hour_without_rows as w)
    ) as normalized_hour_without_rows,
    count(*) filter (where c.passed and c.normalized_at is null) as pending,
    count(*) filter (where c.normalized_at is not null) as normalized_crawls,
    (select count(*) from quarantine) as quarantine_rows_total
from raw.crawls as c
