/* Month-end depth per offer: one row per hourly offer and LOCAL month M in which it was listed
   (the vendor's calendar, intermediate.int_offer_local_daily), its price followed in its listed
   currency (exchange rates cannot make a dip): b = median daily close over local days 8-22 of M
   (>= 5 days), e = over the last 5 days of M (>= 2 days), n = over days 1-7 of M+1 (>= 2 days);
   t_b, t_e, t_n = mean day offsets (days since the 1st of M) of the days used. The offer-month is
   complete when all three exist; its depth is the distance of e below the straight line from b
   to n: expected = b + (n - b)(t_e - t_b) / (t_n - t_b), depth_pct = 100 (expected - e) /
   expected; drop_pct = 100 (b - e) / b, recovery_pct = 100 (n - e) / n; spread_pct, the offer's
   own noise, is the RMS distance (%) of its baseline and next-start closes from that line.
   The small per-period rows marts.month_end_dip tests over all months. Windows and minimums:
   the `params` CTE.
   Incremental by month: a month's row also reads days 1-7 of the next month (params
   next_start_last_day; the header's lookback must match it), so new observations rebuild the
   months from the month of their first UTC day minus 7 days on; since_day() is
   the first day of the first rebuilt month (0001-01-01 in a full build). */
-- incremental: month by month lookback 7 days
with params as (
    select
        -- Windows of local days (intermediate.int_month_windows): the baseline is days 8-22 of
        -- M, the month end its last 5 days, the next start days 1-7 of M+1 (the recovery).
        w.baseline_first_day,
        w.baseline_last_day,
        w.month_end_window_days,
        w.next_start_last_day,
        -- An offer-month is complete with a median over enough days in each window (the
        -- minimums are int_month_windows' too).
        w.min_baseline_days,
        w.min_month_end_days,
        w.min_next_start_days,
        -- Depths are rounded to 1e-6 %: a steady series must tie exactly, not by a float's last
        -- digit.
        6 as depth_decimals
    from intermediate.int_month_windows as w
),

local_days as (   -- the rebuilt months' days and the next month's start (all in a full build)
    select *
    from intermediate.int_offer_local_daily
    where billing_period = 'hour'
        and local_date >= since_day()
        and counted  -- counted once: a non-direct twin of a direct offer is left out
        -- no curated table: its dates carry no calendar (int_sources_without_calendar)
        and source not in (select s.source from intermediate.int_sources_without_calendar as s)
),

offer_days as (   -- each hourly offer's local days, in their own month and as M+1's start
    select
        d.*,
        d.local_month as month,
        date_diff('day', d.local_month, d.local_date) as day_offset,
        case
            when day(d.local_date) between p.baseline_first_day and p.baseline_last_day
                then 'baseline'
            when date_diff('day', d.local_date, last_day(d.local_date)) < p.month_end_window_days
                then 'month_end'
        end as month_window
    from local_days as d
    cross join params as p
    union all
    select
        d.*,
        (d.local_month - interval 1 month)::date as month,
        date_diff('day', (d.local_month - interval 1 month)::date, d.local_date) as day_offset,
        'next_start' as month_window
    from local_days as d
    cross join params as p
    where day(d.local_date) <= p.next_start_last_day
),

offer_windows as (
    select
        offer_id, month, source, vendor, gpu_model, gpu_variant, region_code, offer_kind,
        any_value(region_group) as region_group,
        any_value(local_time_zone) as local_time_zone,
        any_value(currency) as currency,
        count(*) filter (where month_window is distinct from 'next_start') as days_in_month,
        count(*) filter (where month_window = 'baseline') as baseline_days,
        count(*) filter (where month_window = 'month_end') as month_end_days,
        count(*) filter (where month_window = 'next_start') as next_start_days,
        median(close_price_amount::double) filter (where month_window = 'baseline') as b,
        median(close_price_amount::double) filter (where month_window = 'month_end') as e,
        median(close_price_amount::double) filter (where month_window = 'next_start') as n,
        avg(day_offset) filter (where month_window = 'baseline') as t_b,
        avg(day_offset) filter (where month_window = 'month_end') as t_e,
        avg(day_offset) filter (where month_window = 'next_start') as t_n,
        median(close_price_cny_per_gpu_hour::double) filter (where month_window = 'baseline')
            as baseline_cny,
        median(close_price_cny_per_gpu_hour::double) filter (where month_window = 'month_end')
            as month_end_cny,
        median(close_price_cny_per_gpu_hour::double) filter (where month_window = 'next_start')
            as next_start_cny
    from offer_days
    group by offer_id, month, source, vendor, gpu_model, gpu_variant, region_code, offer_kind
),

offer_completeness as (
    select
        w.*,
        w.baseline_days >= p.min_baseline_days
        and w.month_end_days >= p.min_month_end_days
        and w.next_start_days >= p.min_next_start_days as complete
    from offer_windows as w
    cross join params as p
    where w.days_in_month > 0           -- an offer-month exists only where M itself has data
),

offer_line_days as (
    -- The offer's own noise in M is read on the days that draw the b-n line (baseline and next
    -- start); the month end is what is tested, so it is left out.
    select
        d.offer_id,
        d.month,
        d.close_price_amount::double as close_amount,
        c.b + (c.n - c.b) * (d.day_offset - c.t_b) / (c.t_n - c.t_b) as line_amount
    from offer_days as d
    inner join offer_completeness as c on d.offer_id = c.offer_id and d.month = c.month
    where c.complete and d.month_window in ('baseline', 'next_start')
),

offer_spread as (   -- RMS distance of those closes from the line, %
    select
        offer_id,
        month,
        count(*) as spread_days,
        sqrt(avg(power(100 * (close_amount - line_amount) / line_amount, 2))) as spread_pct
    from offer_line_days
    group by offer_id, month
)

select
    c.month,                                            -- first day of the LOCAL month M
    c.offer_id,
    c.source,
    c.vendor,
    c.gpu_model,
    c.gpu_variant,                                      -- null: the listing did not say
    c.region_code,
    c.offer_kind,
    c.region_group,                                     -- province in China, else country
    c.local_time_zone,                                  -- the calendar the month is in
    c.currency,                                         -- the listed currency
    c.days_in_month,                                    -- local days of M with a close
    c.baseline_days,                                    -- of them in days 8-22
    c.month_end_days,                                   -- ... in the last 5 days
    c.next_start_days,                                  -- days 1-7 of M+1 with a close
    c.b,                                                -- median close, days 8-22 (listed)
    c.e,                                                -- median close, last 5 days
    c.n,                                                -- median close, days 1-7 of M+1
    c.t_b,                                              -- mean day offset of the baseline days
    c.t_e,                                              -- ... of the month-end days
    c.t_n,                                              -- ... of the next-start days
    c.baseline_cny,                                     -- b in CNY per GPU-hour, for reading
    c.month_end_cny,                                    -- e in CNY per GPU-hour
    c.next_start_cny,                                   -- n in CNY per GPU-hour
    c.complete,                                         -- all three windows have enough days
    -- rounded (params.depth_decimals): a steady series must tie exactly; null: not complete
    case
        when c.complete
            then round(
                100 * ((c.b + (c.n - c.b) * (c.t_e - c.t_b) / (c.t_n - c.t_b)) - c.e)
                / (c.b + (c.n - c.b) * (c.t_e - c.t_b) / (c.t_n - c.t_b)), p.depth_decimals
            )
    end as depth_pct,                                   -- e below the b-n line, %
    case
        when c.complete then round(100 * (c.b - c.e) / c.b, p.depth_decimals)
    end as drop_pct,                                    -- e below b, %
    case
        when c.complete then round(100 * (c.n - c.e) / c.n, p.depth_decimals)
    end as recovery_pct,                                -- n above e, %
    -- the offer's noise: RMS distance of its baseline and next-start closes from the b-n line,
    -- % (0: a price that did not move); null: not complete
    round(s.spread_pct, p.depth_decimals) as spread_pct,
    s.spread_days                                       -- the days it is measured on
from offer_completeness as c
cross join params as p
left join offer_spread as s on c.offer_id = s.offer_id and c.month = s.month
