/* Hourly listings per group and LOCAL month, for the capacity signal: one row per group (source,
   vendor, card model and variant, region, offer kind; hourly billing only, as in
   marts.month_end_dip) and local month M in which it had offers listed, in M or in days 1-7 of
   M+1: the days of M it was listed on, and per window (baseline = days 8-22 of M, month end = the
   last 5 days, next start = days 1-7 of M+1) the sum over the days of the offers listed and of
   those available (unknown stock counts as available): divided by the days the source was read
   (intermediate.int_source_month_reads), the daily means marts.month_end_capacity compares.
   Windows: intermediate.int_month_windows, as every month-end model.
   Incremental by month: a month's row also reads days 1-7 of the next month (params
   next_start_last_day; the header's lookback must match it); since_day() is
   the first day of the first rebuilt month (0001-01-01 in a full build). */
-- incremental: month by month lookback 7 days
with params as (
    -- baseline: days 8-22 of M; month end: its last 5 days; next start: days 1-7 of M+1
    select
        w.baseline_first_day,
        w.baseline_last_day,
        w.month_end_window_days,
        w.next_start_last_day
    from intermediate.int_month_windows as w
),

hourly as (
    select *
    from intermediate.int_offer_local_daily
    where billing_period = 'hour'
        and local_date >= since_day()
        and counted  -- counted once: a non-direct twin of a direct offer is left out
        -- no curated table: its dates carry no calendar (int_sources_without_calendar)
        and source not in (select s.source from intermediate.int_sources_without_calendar as s)
),

windowed as (   -- each offer-day in its own month, and days 1-7 again as M-1's next start
    select
        h.*,
        h.local_month as month,
        case
            when day(h.local_date) between p.baseline_first_day and p.baseline_last_day
                then 'baseline'
            when date_diff('day', h.local_date, last_day(h.local_date)) < p.month_end_window_days
                then 'month_end'
        end as month_window
    from hourly as h
    cross join params as p
    union all
    select
        h.*,
        (h.local_month - interval 1 month)::date as month,
        'next_start' as month_window
    from hourly as h
    cross join params as p
    where day(h.local_date) <= p.next_start_last_day
),

days as (
    -- one row per group, month, window and local day: a day of M falls in one window of M, so
    -- the days of M are counted as rows below, not by a distinct count (which made DuckDB
    -- aggregate the offer-days twice and join the halves)
    select
        month, source, vendor, gpu_model, gpu_variant, region_code, offer_kind, month_window,
        local_date,
        any_value(region_group) as region_group,
        any_value(local_time_zone) as local_time_zone,
        count(*) as listed_offers,
        count(*) filter (where available) as available_offers
    from windowed
    group by
        month, source, vendor, gpu_model, gpu_variant, region_code, offer_kind, month_window,
        local_date
)

select
    month,                                              -- first day of the LOCAL month M
    source,
    vendor,
    gpu_model,
    gpu_variant,                                        -- null: the listings did not say
    region_code,
    offer_kind,
    any_value(region_group) as region_group,            -- province in China, else country
    any_value(local_time_zone) as local_time_zone,      -- the calendar the month is in
    count(*) filter (where month_window is distinct from 'next_start')
        as listed_days,                                 -- days of M with an offer listed
    coalesce(sum(listed_offers) filter (where month_window = 'baseline'), 0)::bigint
        as baseline_listed_offer_days,                  -- offers listed, summed over days 8-22
    coalesce(sum(listed_offers) filter (where month_window = 'month_end'), 0)::bigint
        as month_end_listed_offer_days,                 -- ... over the last 5 days
    coalesce(sum(listed_offers) filter (where month_window = 'next_start'), 0)::bigint
        as next_start_listed_offer_days,                -- ... over days 1-7 of M+1
    coalesce(sum(available_offers) filter (where month_window = 'baseline'), 0)::bigint
        as baseline_available_offer_days,               -- offers available, days 8-22
    coalesce(sum(available_offers) filter (where month_window = 'month_end'), 0)::bigint
        as month_end_available_offer_days,              -- ... over the last 5 days
    coalesce(sum(available_offers) filter (where month_window = 'next_start'), 0)::bigint
        as next_start_available_offer_days              -- ... over days 1-7 of M+1
from days
group by month, source, vendor, gpu_model, gpu_variant, region_code, offer_kind
