/* Capacity released at month end (a separate signal from a price dip): one row per group
   (source, vendor, card model and variant, region, offer kind; hourly billing only, as in
   month_end_dip) and LOCAL month M, with the group's test over its complete months repeated on
   each row. Per window, the mean daily count of the group's listed offers and of its available
   offers (unknown stock counts as available) over the days its source was read: baseline = local
   days 8-22 of M (>= 5 days), month end = the last 5 days (>= 2), next start = days 1-7 of M+1
   (>= 2). A day the source was not read is a gap, not zero offers; a read day without the group
   counts zero offers, from its first month to the start after its last. release_pct compares the
   month end with the mean of baseline and next start, so a steady build-out is not a release.
   Statistic: a one-sided sign test over complete months (H0: the month-end count is as likely
   above as below the mean of its neighbours; months where it is equal are dropped), exact from
   intermediate.int_sign_test. Three verdicts (pipelines/verdicts.py): 'holds' when that test
   passes with a median release of at least min_release_pct; 'does not hold' when the mirror test
   passes (complete months releasing less than min_release_pct are significantly more than half:
   a steady count is evidence too); else 'not enough evidence', with the months a verdict would
   need at the share seen (months_needed). Thresholds: the `params` CTE. A full rebuild each run,
   over the small per-month rows of intermediate.int_group_month_listings (offers listed per group
   and window) and intermediate.int_source_month_reads (days read per source and window), both
   incremental by month; the windows are theirs. */
-- grain: source, vendor, gpu_model, gpu_variant, region_code, offer_kind, month
-- audit: has_verdict: release_verdict is null
-- audit: p_value_in_range: p_value < 0 or p_value > 1
with params as (
    -- The signal's rules, in one place.
    select
        -- A month is complete with a mean over enough read days in each window, as an
        -- offer-month of the dip (intermediate.int_month_windows).
        w.min_baseline_days,
        w.min_month_end_days,
        w.min_next_start_days,
        -- The month's sign is taken on the difference of means rounded to 9 decimals: means of
        -- small counts must tie exactly, not by a float's last digit.
        9 as tie_decimals,
        -- Evidence minimum: 5 untied complete months (below 5 a sign test cannot reach
        -- p <= 0.05: 1/2^4 = 0.0625).
        5 as min_months,
        0.05 as max_p_value,                -- one-sided sign test
        -- a median release of available offers of at least 10 % (one more offer in a group of
        -- ten)
        10.0 as min_release_pct,
        -- months_needed: the n at which the share seen would pass the sign test, by its normal
        -- approximation (z of a one-sided 5 %), left null beyond max_months_needed
        w.z_one_sided,
        120 as max_months_needed
    from intermediate.int_month_windows as w
),

listings as (
    select * from intermediate.int_group_month_listings
),

offer_groups as (   -- the months each group had offers listed in
    select
        source, vendor, gpu_model, gpu_variant, region_code, offer_kind,
        any_value(region_group) as region_group,
        any_value(local_time_zone) as local_time_zone,
        min(month) filter (where listed_days > 0) as first_month,
        max(month) filter (where listed_days > 0) as last_month
    from listings
    group by source, vendor, gpu_model, gpu_variant, region_code, offer_kind
),

group_month_days as (   -- each month the source was read, from the group's first to after its last
    select
        g.source, g.vendor, g.gpu_model, g.gpu_variant, g.region_code, g.offer_kind,
        r.month,
        -- the month after the last counts only its days 1-7 (the last month's next start): no
        -- window of its own
        case when r.month <= g.last_month then r.read_days else r.first_week_read_days end
            as days_in_month,
        case when r.month <= g.last_month then r.baseline_read_days else 0 end as baseline_days,
        case when r.month <= g.last_month then r.month_end_read_days else 0 end
            as month_end_days,
        case when r.month <= g.last_month then r.next_start_read_days else 0 end
            as next_start_days
    from offer_groups as g
    inner join intermediate.int_source_month_reads as r
        on g.source = r.source
        and r.month between g.first_month and (g.last_month + interval 1 month)::date
),

group_months as (   -- mean daily counts: offers summed over a window / the days it was read
    select
        d.*,
        coalesce(l.baseline_listed_offer_days, 0) / nullif(d.baseline_days, 0)
            as baseline_listed,
        coalesce(l.month_end_listed_offer_days, 0) / nullif(d.month_end_days, 0)
            as month_end_listed,
        coalesce(l.next_start_listed_offer_days, 0) / nullif(d.next_start_days, 0)
            as next_start_listed,
        coalesce(l.baseline_available_offer_days, 0) / nullif(d.baseline_days, 0)
            as baseline_available,
        coalesce(l.month_end_available_offer_days, 0) / nullif(d.month_end_days, 0)
            as month_end_available,
        coalesce(l.next_start_available_offer_days, 0) / nullif(d.next_start_days, 0)
            as next_start_available
    from group_month_days as d
    left join listings as l
        on d.source = l.source and d.vendor = l.vendor and d.gpu_model = l.gpu_model
        and d.gpu_variant is not distinct from l.gpu_variant and d.region_code = l.region_code
        and d.offer_kind = l.offer_kind and d.month = l.month
),

scored as (
    select
        m.*,
        g.region_group,
        g.local_time_zone,
        m.baseline_days >= p.min_baseline_days
        and m.month_end_days >= p.min_month_end_days
        and m.next_start_days >= p.min_next_start_days as complete,
        100 * (m.month_end_listed - (m.baseline_listed + m.next_start_listed) / 2)
        / nullif((m.baseline_listed + m.next_start_listed) / 2, 0) as listed_release_pct,
        100 * (m.month_end_available - (m.baseline_available + m.next_start_available) / 2)
        / nullif((m.baseline_available + m.next_start_available) / 2, 0)
            as available_release_pct,
        -- the sign of the month: +1 more available offers at month end than the neighbours'
        -- mean, -1 fewer, 0 a tie (rounded: means of small counts must tie exactly)
        sign(round(
            m.month_end_available - (m.baseline_available + m.next_start_available) / 2,
            p.tie_decimals
        )) as release_sign
    from group_months as m
    inner join offer_groups as g
        on m.source = g.source and m.vendor = g.vendor and m.gpu_model = g.gpu_model
        and m.gpu_variant is not distinct from g.gpu_variant and m.region_code = g.region_code
        and m.offer_kind = g.offer_kind
    cross join params as p
    where m.days_in_month > 0
),

group_tests as (
    select
        s.source, s.vendor, s.gpu_model, s.gpu_variant, s.region_code, s.offer_kind,
        count(*) as months_observed,
        count(*) filter (where s.release_sign <> 0) as untied_months,
        count(*) filter (where s.release_sign > 0) as released_months,
        -- the mirror test's count: months releasing less than min_release_pct
        count(*) filter (where s.available_release_pct < h.min_release_pct) as short_months,
        median(s.available_release_pct) as median_release_pct
    from scored as s
    cross join params as h
    where s.complete
    group by s.source, s.vendor, s.gpu_model, s.gpu_variant, s.region_code, s.offer_kind
),

signalled as (
    select
        g.*,
        -- exact up to 400 months (33 years: the normal approximation is never needed here)
        p.p_at_least_k as p_value,
        case
            when g.untied_months >= h.min_months and p.p_at_least_k <= h.max_p_value
                and g.median_release_pct >= h.min_release_pct
                then 'holds'
            -- steady counts tie every month: they are evidence of no release, so this test
            -- counts complete months, not untied ones
            when g.months_observed >= h.min_months and q.p_at_least_k <= h.max_p_value
                then 'does not hold'
            else 'not enough evidence'
        end as release_verdict,
        -- the larger of the two shares, as the months a sign test at that share would need
        ceil(power(
            h.z_one_sided / 2
            / nullif(
                greatest(
                    g.released_months / nullif(g.untied_months, 0),
                    g.short_months / g.months_observed
                ) - 0.5, 0
            ), 2
        )) as months_for_verdict
    from group_tests as g
    cross join params as h
    left join intermediate.int_sign_test as p
        on g.untied_months = p.n and g.released_months = p.k
    left join intermediate.int_sign_test as q
        on g.months_observed = q.n and g.short_months = q.k
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
    coalesce(t.release_verdict, 'not enough evidence')
        as release_verdict,                             -- the group's verdict (params CTE)
    case
        when coalesce(t.release_verdict, 'not enough evidence') <> 'not enough evidence' then 0
        when coalesce(t.months_observed, 0) < h.min_months
            then h.min_months - coalesce(t.months_observed, 0)
        when t.months_for_verdict <= h.max_months_needed
            then greatest(1, t.months_for_verdict - t.months_observed)::integer
    end as months_needed                                -- more complete months for a verdict
from scored as s
cross join params as h
left join signalled as t
    on s.source = t.source and s.vendor = t.vendor and s.gpu_model = t.gpu_model
    and s.gpu_variant is not distinct from t.gpu_variant and s.region_code = t.region_code
    and s.offer_kind = t.offer_kind
order by s.source, s.vendor, s.gpu_model, s.gpu_variant, s.region_code, s.offer_kind, s.month
