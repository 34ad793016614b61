/* Each source's calendar (whose looks it shares) and that calendar's cadence (how many days
   apart its looks usually are), so a chart never draws a line across a gap longer than its
   source looks: a live crawl's calendar is 'crawl', looked at hourly, so its daily points are
   one day apart; a backfilled archive's is the archive itself ('cloud-gpus' for
   'cloud-gpus:aws'), whose looks are its commits (a daily tracker's, a pricing file's quarterly
   versions, a curated table's edits): its cadence is the median spacing of the days it has
   (one day when it has a single day). A chart line breaks where two of its points are more
   than max_gap_days apart (marts.card_history, marts.chart_points): the cadence with half of it
   again for the jitter of a table edited by hand (a daily calendar's is still one day: a missed
   day breaks it).
   A view of intermediate.int_source_days (sources x days, incremental): the cadence spans every
   day of the calendar, so a table would be rebuilt from the whole history every hour; the view
   reads the small per-day table when a chart is drawn. */
-- grain: source
-- audit: cadence_positive: cadence_days is null or cadence_days < 1 or max_gap_days < cadence_days
-- materialized: view
with sources as (
    select
        source,
        bool_or(from_archive) as from_archive,
        any_value(calendar) as calendar     -- a source's calendar: from its name, every day
    from intermediate.int_source_days
    group by source
),

calendar_days as (
    select distinct
        calendar,
        day
    from intermediate.int_source_days
),

spacing as (
    select
        calendar,
        day - lag(day) over (partition by calendar order by day) as gap_days
    from calendar_days
),

cadences as (
    select
        calendar,
        count(*)::integer as calendar_days,
        -- 'crawl': hourly, so a day without a point is a day the offer was not seen
        case
            when calendar = 'crawl' then 1
            else greatest(1, coalesce(ceil(median(gap_days)), 1))
        end::integer as cadence_days
    from spacing
    group by calendar
)

select
    s.source,
    s.calendar,             -- 'crawl', or the archive: 'cloud-gpus', 'gpu-rental-prices', ...
    s.from_archive,         -- read from a public price archive (gpuprices backfill)
    c.calendar_days,        -- days the calendar has any observation
    c.cadence_days,         -- its looks' usual spacing
    floor(c.cadence_days * 1.5)::integer as max_gap_days  -- a longer gap breaks a chart line
from sources as s
inner join cadences as c on s.calendar = c.calendar
order by s.source
