/* End-of-month dip, measured on the same offers: one row per group (source, vendor, card model
   and variant, region, offer kind) and LOCAL month M (the vendor's calendar; hourly billing only),
   with the group's test over all its complete months repeated on each row.
   Each offer-month's depth (intermediate.int_offer_month_depth, incremental by month): the
   offer's median close over the last 5 local days of M (e) below the straight line from its
   median over days 8-22 (b) to its median over days 1-7 of M+1 (n), in its listed currency
   (exchange rates cannot make a dip); a steady trend gives depth ~ 0, a dip that recovers gives
   depth > 0. drop_pct = 100 (b - e) / b, recovery_pct = 100 (n - e) / n.
   Statistic: a one-sided sign test over the group's complete offer-months (H0: depth is as
   likely positive as negative; exact ties, depth = 0 to 1e-6 %, are dropped), exact from
   intermediate.int_sign_test up to 400 offer-months, normal approximation above; strength is the
   median depth with its order-statistic interval (>= 90 % coverage from n = 5 on). Offer-months
   of one month share that month's market, so a month-wide shock moves them together: hence also
   at least 2 months. Thresholds: the `params` CTE. A full rebuild each run, over the small
   per-offer-month rows. */
with params as (
    -- The signal's rules, in one place (tuned against `make truth`); the windows and the
    -- offer-month minimums are in intermediate.int_offer_month_depth.
    select
        -- Evidence minimum: 2 local months (offer-months of one month share its shocks) and 5
        -- untied offer-months (below 5 the sign test cannot reach p <= 0.05: 1/2^4 = 0.0625).
        2 as min_months,
        5 as min_offer_months,
        0.05 as max_p_value,                -- one-sided sign test
        -- a median depth of at least 1 %: a 0.04 % chord error of a geometric decline or noise
        -- must not count
        1.0 as min_strength_pct,
        -- intermediate.int_sign_test is exact up to n = 400; above, the normal approximation
        400 as exact_max_n,
        1.645 as ci_z,                      -- z of a one-sided 5 % tail: a 90 % interval
        0.90 as normal_ci_coverage          -- the coverage the normal approximation aims at
),

offer_months as (   -- one row per hourly offer and local month, its depth when complete
    select * from intermediate.int_offer_month_depth
),

group_months as (
    select
        month, source, vendor, gpu_model, gpu_variant, region_code, offer_kind,
        any_value(region_group) as region_group,
        any_value(local_time_zone) as local_time_zone,
        string_agg(distinct currency, ',' order by currency) as currency,
        count(*) as offers_listed,
        count(*) filter (where complete) as offers_compared,
        median(baseline_cny) filter (where complete) as baseline_price_cny_per_gpu_hour,
        median(month_end_cny) filter (where complete) as month_end_price_cny_per_gpu_hour,
        median(next_start_cny) filter (where complete) as next_start_price_cny_per_gpu_hour,
        median(depth_pct) filter (where complete) as dip_pct,
        median(drop_pct) filter (where complete) as drop_pct,
        median(recovery_pct) filter (where complete) as recovery_pct
    from offer_months
    group by month, source, vendor, gpu_model, gpu_variant, region_code, offer_kind
),

group_tests as (   -- over every complete offer-month of the group
    select
        source, vendor, gpu_model, gpu_variant, region_code, offer_kind,
        count(distinct month) as months_observed,
        count(distinct offer_id) as offers_followed,
        count(*) as complete_offer_months,
        count(*) filter (where depth_pct <> 0) as offer_months,
        count(*) filter (where depth_pct > 0) as positive_offer_months,
        median(depth_pct) as strength_pct,
        list_sort(list(depth_pct)) as sorted_depths,
        median(drop_pct) as median_drop_pct,
        median(recovery_pct) as median_recovery_pct
    from offer_months
    where complete
    group by source, vendor, gpu_model, gpu_variant, region_code, offer_kind
),

normal_tail as (   -- the sign test's normal approximation, for n above the exact table
    select
        *,
        -- continuity-corrected z of P(X >= k) for X ~ Bin(n, 1/2); Q(z) below by Abramowitz &
        -- Stegun 26.2.17 (error < 1e-7): DuckDB has no normal distribution function
        (positive_offer_months - 0.5 - offer_months / 2)
        / (sqrt(nullif(offer_months, 0)) / 2) as z
    from group_tests
),

normal_upper_tail as (   -- Q(|z|)
    select
        *,
        exp(-z * z / 2) / sqrt(2 * pi()) * tail_t * (
            0.319381530 + tail_t * (
                -0.356563782 + tail_t * (
                    1.781477937 + tail_t * (-1.821255978 + tail_t * 1.330274429)
                )
            )
        ) as upper_tail
    from (select *, 1 / (1 + 0.2316419 * abs(z)) as tail_t from normal_tail) as tails
),

tested as (
    select
        g.*,
        case
            when g.offer_months = 0 then null
            when g.offer_months <= h.exact_max_n then p.p_at_least_k
            when g.z >= 0 then g.upper_tail
            else 1 - g.upper_tail
        end as p_value,
        -- ranks of the median's interval: exact up to exact_max_n, else n/2 -+ z sqrt(n)/2
        coalesce(
            r.median_ci_lower_rank,
            greatest(
                1,
                floor(g.complete_offer_months / 2 - h.ci_z * sqrt(g.complete_offer_months) / 2)
            )::integer
        ) as ci_lower_rank,
        coalesce(
            r.median_ci_upper_rank,
            g.complete_offer_months + 1 - greatest(
                1,
                floor(g.complete_offer_months / 2 - h.ci_z * sqrt(g.complete_offer_months) / 2)
            )::integer
        ) as ci_upper_rank,
        coalesce(r.median_ci_coverage, h.normal_ci_coverage) as ci_coverage
    from normal_upper_tail as g
    cross join params as h
    left join intermediate.int_sign_test as p
        on g.offer_months = p.n and g.positive_offer_months = p.k
    left join intermediate.int_sign_test as r
        on g.complete_offer_months = r.n and r.k = 0
),

signalled as (
    select
        t.*,
        t.sorted_depths[t.ci_lower_rank] as depth_ci_low_pct,
        t.sorted_depths[t.ci_upper_rank] as depth_ci_high_pct,
        coalesce(
            t.months_observed >= h.min_months
            and t.offer_months >= h.min_offer_months
            and t.p_value <= h.max_p_value
            and t.strength_pct >= h.min_strength_pct
            and t.median_drop_pct > 0
            and t.median_recovery_pct > 0,
            false
        ) as dip_signal
    from tested as t
    cross join params as h
),

flagged as (
    select
        m.*,
        case
            when m.offers_compared > 0
                then m.dip_pct >= h.min_strength_pct and m.drop_pct > 0 and m.recovery_pct > 0
        end as dipped
    from group_months as m
    cross join params as h
)

select
    f.month,                                            -- first day of the LOCAL month
    f.local_time_zone,                                  -- the calendar the month is in
    f.source,
    f.vendor,
    f.gpu_model,
    f.gpu_variant,                                      -- null: the listings did not say
    f.region_code,
    f.region_group,
    f.offer_kind,
    f.currency,                                         -- listed currency (',' if several)
    f.offers_listed,                                    -- hourly offers with a price in M
    f.offers_compared,                                  -- of them, complete offer-months
    f.baseline_price_cny_per_gpu_hour::decimal(18, 6)
        as baseline_price_cny_per_gpu_hour,             -- median over offers, days 8-22 (CNY)
    f.month_end_price_cny_per_gpu_hour::decimal(18, 6)
        as month_end_price_cny_per_gpu_hour,            -- same, last 5 days
    f.next_start_price_cny_per_gpu_hour::decimal(18, 6)
        as next_start_price_cny_per_gpu_hour,           -- same, days 1-7 of M+1
    f.dip_pct::double as dip_pct,                       -- median depth below the b-n line, %
    f.drop_pct::double as drop_pct,                     -- median drop from baseline, %
    f.recovery_pct::double as recovery_pct,             -- median rise from month end to M+1, %
    f.dipped,                                           -- this month; null: none complete
    coalesce(s.months_observed, 0) as months_observed,  -- group's months with a complete offer
    count(case when f.dipped then 1 end) over (
        partition by f.source, f.vendor, f.gpu_model, f.gpu_variant, f.region_code, f.offer_kind
    ) as months_dipped,                                 -- of them, months that dipped
    coalesce(s.offers_followed, 0) as offers_followed,  -- distinct offers in the test
    coalesce(s.offer_months, 0) as offer_months,        -- n: complete, untied offer-months
    coalesce(s.positive_offer_months, 0)
        as positive_offer_months,                       -- k: of them, depth > 0
    s.p_value::double as p_value,                       -- one-sided sign test P(X >= k)
    s.strength_pct::double as strength_pct,             -- median depth over offer-months, %
    s.depth_ci_low_pct::double as depth_ci_low_pct,     -- order-statistic interval of it
    s.depth_ci_high_pct::double as depth_ci_high_pct,
    s.ci_coverage::double as ci_coverage,               -- the interval's coverage (< 0.9: n < 5)
    s.median_drop_pct::double as median_drop_pct,       -- over offer-months, %
    s.median_recovery_pct::double as median_recovery_pct,
    coalesce(s.dip_signal, false) as dip_signal         -- the group's verdict (params CTE)
from flagged as f
left join signalled as s
    on f.source = s.source and f.vendor = s.vendor and f.gpu_model = s.gpu_model
    and f.gpu_variant is not distinct from s.gpu_variant and f.region_code = s.region_code
    and f.offer_kind = s.offer_kind
order by f.source, f.vendor, f.gpu_model, f.gpu_variant, f.region_code, f.offer_kind, f.month
