/* Capacity released at month end (a separate signal from a price dip): one row per group
   (source, vendor, card model and variant, region, offer kind; hourly billing only, as in
   month_end_dip) and LOCAL month M, with the group's test over its complete months repeated on
   each row. Per window, the mean daily count of the group's listed offers and of its available
   offers (unknown stock counts as available) over the days its source was read: baseline = local
   days 8-22 of M (>= 5 days), month end = the last 5 days (>= 2), next start = days 1-7 of M+1
   (>= 2). A day the source was not read is a gap, not zero offers. release_pct compares the month
   end with the mean of baseline and next start, so a steady build-out is not a release.
   Statistic: a one-sided sign test over complete months (H0: the month-end count is as likely
   above as below the mean of its neighbours; months where it is equal are dropped), exact from
   intermediate.int_sign_test. Thresholds: the `thresholds` CTE. */
with thresholds as (
    -- Evidence minimum: 5 untied complete months (below 5 a sign test cannot reach p <= 0.05:
    -- 1/2^4 = 0.0625); then p <= 0.05 and a median release of available offers of at least 10 %
    -- (one more offer in a group of ten).
    select 5 as min_months, 0.05 as max_p_value, 10.0 as min_release_pct
),

hourly as (
    select * from intermediate.int_offer_local_daily where billing_period = 'hour'
),

read_days as (   -- the local days each source was read (any offer, any billing period)
    select distinct source, local_date, local_month from intermediate.int_offer_local_daily
),

offer_groups as (
    select
        source, vendor, gpu_model, gpu_variant, region_code, offer_kind,
        any_value(region_group) as region_group,
        any_value(local_time_zone) as local_time_zone,
        min(local_month) as first_month,
        max(local_month) as last_month
    from hourly
    group by source, vendor, gpu_model, gpu_variant, region_code, offer_kind
),

daily_counts as (   -- every read day from the group's first month to the start after its last
    select
        g.source, g.vendor, g.gpu_model, g.gpu_variant, g.region_code, g.offer_kind,
        r.local_date, r.local_month,
        count(h.offer_id) as listed_offers,
        count(h.offer_id) filter (where h.available) as available_offers
    from offer_groups as g
    join read_days as r
        on r.source = g.source
       and r.local_date >= g.first_month
       and r.local_date < (g.last_month + interval 1 month)::date + 7
    left join hourly as h
        on h.source = g.source and h.vendor = g.vendor and h.gpu_model = g.gpu_model
       and h.gpu_variant is not distinct from g.gpu_variant and h.region_code = g.region_code
       and h.offer_kind = g.offer_kind and h.local_date = r.local_date
    group by g.source, g.vendor, g.gpu_model, g.gpu_variant, g.region_code, g.offer_kind,
             r.local_date, r.local_month
),

windowed as (   -- each day in its own month, and days 1-7 again as the previous month's start
    select *, local_month as month,
           case
               when day(local_date) between 8 and 22 then 'baseline'
               when date_diff('day', local_date, last_day(local_date)) < 5 then 'month_end'
           end as month_window
    from daily_counts
    union all
    select *, (local_month - interval 1 month)::date, 'next_start'
    from daily_counts
    where day(local_date) <= 7
),

group_months as (
    select
        month, source, vendor, gpu_model, gpu_variant, region_code, offer_kind,
        count(*) filter (where month_window = 'baseline') as baseline_days,
        count(*) filter (where month_window = 'month_end') as month_end_days,
        count(*) filter (where month_window = 'next_start') as next_start_days,
        count(*) filter (where month_window is distinct from 'next_start') as days_in_month,
        avg(listed_offers) filter (where month_window = 'baseline') as baseline_listed,
        avg(listed_offers) filter (where month_window = 'month_end') as month_end_listed,
        avg(listed_offers) filter (where month_window = 'next_start') as next_start_listed,
        avg(available_offers) filter (where month_window = 'baseline') as baseline_available,
        avg(available_offers) filter (where month_window = 'month_end') as month_end_available,
        avg(available_offers) filter (where month_window = 'next_start')
            as next_start_available
    from windowed
    group by month, source, vendor, gpu_model, gpu_variant, region_code, offer_kind
),

scored as (
    select
        m.*,
        g.region_group,
        g.local_time_zone,
        m.baseline_days >= 5 and m.month_end_days >= 2 and m.next_start_days >= 2 as complete,
        100 * (m.month_end_listed - (m.baseline_listed + m.next_start_listed) / 2)
            / nullif((m.baseline_listed + m.next_start_listed) / 2, 0) as listed_release_pct,
        100 * (m.month_end_available - (m.baseline_available + m.next_start_available) / 2)
            / nullif((m.baseline_available + m.next_start_available) / 2, 0)
            as available_release_pct,
        -- the sign of the month: +1 more available offers at month end than the neighbours'
        -- mean, -1 fewer, 0 a tie (rounded: means of small counts must tie exactly)
        sign(round(m.month_end_available
                   - (m.baseline_available + m.next_start_available) / 2, 9)) as release_sign
    from group_months as m
    join offer_groups as g
        on g.source = m.source and g.vendor = m.vendor and g.gpu_model = m.gpu_model
       and g.gpu_variant is not distinct from m.gpu_variant and g.region_code = m.region_code
       and g.offer_kind = m.offer_kind
    where m.days_in_month > 0
),

group_tests as (
    select
        s.source, s.vendor, s.gpu_model, s.gpu_variant, s.region_code, s.offer_kind,
        count(*) as months_observed,
        count(*) filter (where s.release_sign <> 0) as untied_months,
        count(*) filter (where s.release_sign > 0) as released_months,
        median(s.available_release_pct) as median_release_pct
    from scored as s
    where s.complete
    group by s.source, s.vendor, s.gpu_model, s.gpu_variant, s.region_code, s.offer_kind
),

signalled as (
    select
        g.*,
        -- exact up to 400 months (33 years: the normal approximation is never needed here)
        p.p_at_least_k as p_value,
        coalesce(g.untied_months >= h.min_months and p.p_at_least_k <= h.max_p_value
                 and g.median_release_pct >= h.min_release_pct, false) as release_signal
    from group_tests as g
    cross join thresholds as h
    left join intermediate.int_sign_test as p
        on p.n = g.untied_months and p.k = g.released_months
)

select
    s.month,                                            -- first day of the LOCAL month
    s.local_time_zone,                                  -- the calendar the month is in
    s.source,
    s.vendor,
    s.gpu_model,
    s.gpu_variant,                                      -- null: the listings did not say
    s.region_code,
    s.region_group,
    s.offer_kind,
    s.baseline_listed::double as baseline_listed_offers,        -- mean daily count, days 8-22
    s.month_end_listed::double as month_end_listed_offers,      -- last 5 days
    s.next_start_listed::double as next_start_listed_offers,    -- days 1-7 of M+1
    s.baseline_available::double as baseline_available_offers,
    s.month_end_available::double as month_end_available_offers,
    s.next_start_available::double as next_start_available_offers,
    case when s.complete then s.listed_release_pct end::double
        as listed_release_pct,                          -- month end vs neighbours' mean, %
    case when s.complete then s.available_release_pct end::double
        as available_release_pct,                       -- the same for available offers
    case when s.complete then s.release_sign > 0 end as released,  -- null: not complete
    coalesce(t.months_observed, 0) as months_observed,  -- the group's complete months
    coalesce(t.untied_months, 0) as untied_months,      -- n of the sign test
    coalesce(t.released_months, 0) as released_months,  -- k: more available at month end
    t.p_value::double as p_value,                       -- one-sided sign test P(X >= k)
    t.median_release_pct::double as median_release_pct, -- median available_release_pct
    coalesce(t.release_signal, false) as release_signal -- the group's verdict (thresholds CTE)
from scored as s
left join signalled as t
    on t.source = s.source and t.vendor = s.vendor and t.gpu_model = s.gpu_model
   and t.gpu_variant is not distinct from s.gpu_variant and t.region_code = s.region_code
   and t.offer_kind = s.offer_kind
order by s.source, s.vendor, s.gpu_model, s.gpu_variant, s.region_code, s.offer_kind, s.month
