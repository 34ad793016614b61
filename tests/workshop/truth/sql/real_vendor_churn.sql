-- Vendors entering and leaving, per day of each archive whose dates are calendar dates (a
-- catalog refresh: raw.crawls.calendar_signal), against the archive's previous day: the days a
-- provider comes or goes in the real histories (`make truth-real`, real_market.py). An archive's
-- sources are '<archive>:<vendor>' (pipelines/backfill/items.py, source_name).
with calendar_sources as (
    select distinct source
    from raw.crawls
    where calendar_signal
),

present as (
    select distinct
        split_part(d.source, ':', 1) as archive,
        d.vendor,
        d.observed_date
    from intermediate.int_offer_daily as d
    inner join calendar_sources as c on d.source = c.source
),

archive_days as (
    select
        archive,
        observed_date,
        lag(observed_date) over (partition by archive order by observed_date) as previous_date
    from (select distinct archive, observed_date from present) as listed_days
),

sides as (
    select a.archive, a.observed_date, p.vendor, true as today
    from archive_days as a
    inner join present as p on a.archive = p.archive and a.observed_date = p.observed_date
    where a.previous_date is not null
    union all
    select a.archive, a.observed_date, p.vendor, false as today
    from archive_days as a
    inner join present as p on a.archive = p.archive and a.previous_date = p.observed_date
),

vendors as (
    select
        archive, observed_date, vendor,
        bool_or(today) as now_listed,
        bool_or(not today) as was_listed
    from sides
    group by archive, observed_date, vendor
)

select
    archive,
    observed_date,
    count(*) filter (where now_listed) as vendors,
    count(*) filter (where now_listed and not was_listed) as entering,
    count(*) filter (where was_listed and not now_listed) as leaving
from vendors
group by archive, observed_date
order by archive, observed_date
