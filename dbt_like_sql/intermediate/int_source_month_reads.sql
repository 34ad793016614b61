/* The days each source was read, per LOCAL month: one row per source and local month M with the
   number of local days of M on which any of its offers (any billing period) has a close, in
   total and in each window of the month-end signals (baseline = days 8-22, month end = the last
   5 days, first week = days 1-7), and the read days 1-7 of M+1 (the next start). A day the source
   was not read is a gap, not zero offers: marts.month_end_capacity divides its counts by these.
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

read_days as (   -- the local days each source was read (any offer, any billing period)
    select distinct
        source,
        local_date,
        local_month
    from intermediate.int_offer_local_daily
    where local_date >= since_day()
        -- no curated table: its dates carry no calendar (int_sources_without_calendar)
        and source not in (select s.source from intermediate.int_sources_without_calendar as s)
),

windowed as (   -- each day in its own month, and days 1-7 again as the previous month's start
    select
        r.source,
        r.local_date,
        r.local_month as month,
        case
            when day(r.local_date) between p.baseline_first_day and p.baseline_last_day
                then 'baseline'
            when date_diff('day', r.local_date, last_day(r.local_date)) < p.month_end_window_days
                then 'month_end'
            when day(r.local_date) <= p.next_start_last_day then 'first_week'
        end as month_window
    from read_days as r
    cross join params as p
    union all
    select
        r.source,
        r.local_date,
        (r.local_month - interval 1 month)::date as month,
        'next_start' as month_window
    from read_days as r
    cross join params as p
    where day(r.local_date) <= p.next_start_last_day
)

select
    month,                                              -- first day of the LOCAL month M
    source,
    count(*) filter (where month_window is distinct from 'next_start')
        as read_days,                                   -- days of M the source was read
    count(*) filter (where month_window = 'baseline') as baseline_read_days,    -- days 8-22
    count(*) filter (where month_window = 'month_end') as month_end_read_days,  -- last 5 days
    count(*) filter (where month_window = 'first_week') as first_week_read_days, -- days 1-7
    count(*) filter (where month_window = 'next_start')
        as next_start_read_days                         -- days 1-7 of M+1
from windowed
group by month, source
