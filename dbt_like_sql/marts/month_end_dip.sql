/* End-of-month dip, measured on the same offers: one row per group (source, vendor, card model
   and variant, region, offer kind) and LOCAL month M (the vendor's calendar; hourly billing only),
   with this month's verdict and the group's verdict over all its complete months repeated on
   each row.
   Each offer-month's depth (intermediate.int_offer_month_depth, incremental by month): the
   offer's median close over the last 5 local days of M (e) below the straight line from its
   median over days 8-22 (b) to its median over days 1-7 of M+1 (n), in its listed currency
   (exchange rates cannot make a dip); a steady trend gives depth ~ 0, a dip that recovers gives
   depth > 0. drop_pct = 100 (b - e) / b, recovery_pct = 100 (n - e) / n.
   Statistic (docs/signals.md): the depth is judged against the offer's own noise, the RMS
   distance of its baseline and next-start closes from that line pooled over its complete months
   (floored: a price that never moved still has a last digit), times noise_to_depth_se (a 5-day
   median against a line through two other medians). A month: the median depth over its offers
   with the median of their standard errors, NOT divided by the number of offers, since offers of
   one month share that month's market. The group: the months pooled by a random-effects mean
   (DerSimonian-Laird): a month-wide shock that one month has and another has not is measured
   as the spread between months beyond their noise (tau) and widens the interval, so one deep
   month cannot make a recurring dip. Three verdicts (pipelines/verdicts.py): 'holds' when the
   one-sided 95 % bound is above 0 with a depth of at least min_strength_pct, a drop and a
   recovery; 'does not hold' when the upper bound is below min_strength_pct (no dip that counts
   is left in the interval); else 'not enough evidence', with the months a verdict would need at
   the depth and noise seen (months_needed). A group's recurring verdict needs min_months months;
   a single complete month gets its own verdict (month_verdict). Thresholds: the `params` CTE.
   A full rebuild each run, over the small per-offer-month rows. */
-- grain: source, vendor, gpu_model, gpu_variant, region_code, offer_kind, month
-- audit: has_verdict: dip_verdict is null or month_verdict is null
-- audit: p_value_in_range: p_value < 0 or p_value > 1
with params as (
    -- The signal's rules, in one place (tuned against `make truth`); the windows and the
    -- offer-month minimums are in intermediate.int_offer_month_depth.
    select
        -- a recurring dip needs 2 complete months; one month gets its own month_verdict
        2 as min_months,
        w.z_one_sided,                      -- one-sided 5 %: the interval is a 90 % one
        -- a depth of at least 1 %: a 0.04 % chord error of a geometric decline or noise must
        -- not count
        1.0 as min_strength_pct,
        -- an offer's noise below 0.25 % is read as 0.25 %: prices are listed to a cent or a
        -- fen, and a price that never moved in a month can still move at its end
        0.25 as min_noise_pct,
        -- a depth's standard error per unit of the offer's noise: a 5-day median against a line
        -- through two other medians of a slowly wandering price (measured on the simulator's
        -- no-dip groups: depth / noise has a standard deviation of 1.0-1.5)
        1.5 as noise_to_depth_se,
        -- months_needed is left null beyond this: the estimate sits on a verdict's edge
        60 as max_months_needed
    from intermediate.int_month_windows as w
),

offer_months as (   -- one row per hourly offer and local month, its depth when complete
    select * from intermediate.int_offer_month_depth
),

offer_noise as (   -- each offer's own noise, pooled over its complete months (RMS)
    select
        offer_id,
        sqrt(sum(power(spread_pct, 2) * spread_days) / sum(spread_days)) as noise_pct
    from offer_months
    where complete and spread_days > 0
    group by offer_id
),

offer_month_errors as (
    select
        o.*,
        greatest(coalesce(n.noise_pct, 0), h.min_noise_pct) as noise_pct,
        h.noise_to_depth_se * greatest(coalesce(n.noise_pct, 0), h.min_noise_pct) as se_pct
    from offer_months as o
    cross join params as h
    left join offer_noise as n on o.offer_id = n.offer_id
),

group_months as (
    select
        month, source, vendor, gpu_model, gpu_variant, region_code, offer_kind,
        any_value(region_group) as region_group,
        any_value(local_time_zone) as local_time_zone,
        -- the currencies listed, sorted, ',' between (null: none); a list, not a distinct
        -- string_agg, which made DuckDB aggregate the offer-months twice and join the halves
        case
            when count(currency) > 0
                then array_to_string(list_sort(list_distinct(list(currency))), ',')
        end as currency,
        count(*) as offers_listed,
        count(*) filter (where complete) as offers_compared,
        median(baseline_cny) filter (where complete) as baseline_price_cny_per_gpu_hour,
        median(month_end_cny) filter (where complete) as month_end_price_cny_per_gpu_hour,
        median(next_start_cny) filter (where complete) as next_start_price_cny_per_gpu_hour,
        median(depth_pct) filter (where complete) as dip_pct,
        median(se_pct) filter (where complete) as dip_se_pct,
        median(drop_pct) filter (where complete) as drop_pct,
        median(recovery_pct) filter (where complete) as recovery_pct
    from offer_month_errors
    group by month, source, vendor, gpu_model, gpu_variant, region_code, offer_kind
),

complete_months as (   -- with the fixed-effect weight of each month
    select *, 1 / power(dip_se_pct, 2) as weight
    from group_months
    where offers_compared > 0
),

fixed_effect as (
    select
        source, vendor, gpu_model, gpu_variant, region_code, offer_kind,
        count(*) as months_observed,
        sum(weight * dip_pct) / sum(weight) as fixed_mean,
        sum(weight) as sum_weight,
        sum(power(weight, 2)) as sum_weight_squared
    from complete_months
    group by source, vendor, gpu_model, gpu_variant, region_code, offer_kind
),

heterogeneity as (   -- Cochran's Q: the months' weighted squared distance from their mean
    select
        f.source, f.vendor, f.gpu_model, f.gpu_variant, f.region_code, f.offer_kind,
        sum(c.weight * power(c.dip_pct - f.fixed_mean, 2)) as q_statistic
    from fixed_effect as f
    inner join complete_months as c
        on f.source = c.source and f.vendor = c.vendor and f.gpu_model = c.gpu_model
        and f.gpu_variant is not distinct from c.gpu_variant and f.region_code = c.region_code
        and f.offer_kind = c.offer_kind
    group by f.source, f.vendor, f.gpu_model, f.gpu_variant, f.region_code, f.offer_kind
),

between_months as (   -- DerSimonian-Laird: the months' spread beyond their own noise (tau^2)
    select
        f.*,
        case
            when f.months_observed > 1
                then greatest(
                    0,
                    (q.q_statistic - (f.months_observed - 1))
                    / (f.sum_weight - f.sum_weight_squared / f.sum_weight)
                )
            else 0
        end as tau_squared
    from fixed_effect as f
    inner join heterogeneity as q
        on f.source = q.source and f.vendor = q.vendor and f.gpu_model = q.gpu_model
        and f.gpu_variant is not distinct from q.gpu_variant and f.region_code = q.region_code
        and f.offer_kind = q.offer_kind
),

group_tests as (   -- the random-effects mean over the group's complete months
    select
        b.source, b.vendor, b.gpu_model, b.gpu_variant, b.region_code, b.offer_kind,
        b.months_observed,
        sqrt(b.tau_squared) as between_month_pct,
        sum(c.dip_pct / (power(c.dip_se_pct, 2) + b.tau_squared))
        / sum(1 / (power(c.dip_se_pct, 2) + b.tau_squared)) as strength_pct,
        1 / sqrt(sum(1 / (power(c.dip_se_pct, 2) + b.tau_squared))) as strength_se_pct,
        -- one month's standard error, as the pooled one would be with one month
        sqrt(avg(power(c.dip_se_pct, 2)) + b.tau_squared) as month_se_pct,
        median(c.drop_pct) as median_drop_pct,
        median(c.recovery_pct) as median_recovery_pct
    from between_months as b
    inner join complete_months as c
        on b.source = c.source and b.vendor = c.vendor and b.gpu_model = c.gpu_model
        and b.gpu_variant is not distinct from c.gpu_variant and b.region_code = c.region_code
        and b.offer_kind = c.offer_kind
    group by
        b.source, b.vendor, b.gpu_model, b.gpu_variant, b.region_code, b.offer_kind,
        b.months_observed, b.tau_squared
),

group_offers as (
    select
        source, vendor, gpu_model, gpu_variant, region_code, offer_kind,
        count(distinct offer_id) as offers_followed,
        count(*) as offer_months,
        count(*) filter (where depth_pct > 0) as positive_offer_months,
        median(noise_pct) as noise_pct
    from offer_month_errors
    where complete
    group by source, vendor, gpu_model, gpu_variant, region_code, offer_kind
),

normal_tail as (   -- P(Z >= z) of the pooled depth, for its p-value
    select
        *,
        -- Q(|z|) by Abramowitz & Stegun 26.2.17 (error < 1e-7): DuckDB has no normal
        -- distribution function
        strength_pct / strength_se_pct as z,
        1 / (1 + 0.2316419 * abs(strength_pct / strength_se_pct)) as tail_t
    from group_tests
),

tested as (
    select
        t.*,
        exp(-t.z * t.z / 2) / sqrt(2 * pi()) * t.tail_t * (
            0.319381530 + t.tail_t * (
                -0.356563782 + t.tail_t * (
                    1.781477937 + t.tail_t * (-1.821255978 + t.tail_t * 1.330274429)
                )
            )
        ) as upper_tail,
        t.strength_pct - h.z_one_sided * t.strength_se_pct as depth_ci_low_pct,
        t.strength_pct + h.z_one_sided * t.strength_se_pct as depth_ci_high_pct
    from normal_tail as t
    cross join params as h
),

signalled as (
    select
        t.*,
        case when t.z >= 0 then t.upper_tail else 1 - t.upper_tail end as p_value,
        case
            when t.months_observed < h.min_months then 'not enough evidence'
            when t.depth_ci_low_pct > 0 and t.strength_pct >= h.min_strength_pct
                and t.median_drop_pct > 0 and t.median_recovery_pct > 0
                then 'holds'
            when t.depth_ci_high_pct < h.min_strength_pct then 'does not hold'
            else 'not enough evidence'
        end as dip_verdict,
        -- months at which the interval (shrinking like 1 / sqrt(months)) would clear the edge
        -- the depth is nearer: 0 for 'holds', min_strength_pct for 'does not hold'
        ceil(power(
            h.z_one_sided * t.month_se_pct
            / nullif(
                case
                    when t.strength_pct >= h.min_strength_pct then t.strength_pct
                    else h.min_strength_pct - t.strength_pct
                end, 0
            ), 2
        )) as months_for_verdict
    from tested as t
    cross join params as h
),

flagged as (
    select
        m.*,
        m.dip_pct - h.z_one_sided * m.dip_se_pct as month_ci_low_pct,
        m.dip_pct + h.z_one_sided * m.dip_se_pct as month_ci_high_pct,
        case
            when m.offers_compared = 0 then 'not enough evidence'
            when m.dip_pct - h.z_one_sided * m.dip_se_pct > 0
                and m.dip_pct >= h.min_strength_pct and m.drop_pct > 0 and m.recovery_pct > 0
                then 'holds'
            when m.dip_pct + h.z_one_sided * m.dip_se_pct < h.min_strength_pct
                then 'does not hold'
            else 'not enough evidence'
        end as month_verdict
    from group_months as m
    cross join params as h
),

counted as (
    -- the group's months whose verdict holds, counted over the group-months: a window over the
    -- final join, whose row estimate is billions, took longer than the rest of the model
    select
        f.*,
        count(case when f.month_verdict = 'holds' then 1 end) over (
            partition by
                f.source, f.vendor, f.gpu_model, f.gpu_variant, f.region_code, f.offer_kind
        ) as months_dipped
    from flagged as f
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
    f.dip_se_pct::double as dip_se_pct,                 -- its standard error (offers' noise)
    f.month_ci_low_pct::double as month_ci_low_pct,     -- 90 % interval of this month's depth
    f.month_ci_high_pct::double as month_ci_high_pct,   -- ... its upper end
    f.drop_pct::double as drop_pct,                     -- median drop from baseline, %
    f.recovery_pct::double as recovery_pct,             -- median rise from month end to M+1, %
    f.month_verdict,                                    -- this month-end dipped? (3 verdicts)
    coalesce(s.months_observed, 0) as months_observed,  -- group's months with a complete offer
    f.months_dipped,                                    -- of them, months whose verdict holds
    coalesce(o.offers_followed, 0) as offers_followed,  -- distinct offers in the test
    coalesce(o.offer_months, 0) as offer_months,        -- complete offer-months
    coalesce(o.positive_offer_months, 0)
        as positive_offer_months,                       -- of them, depth > 0
    o.noise_pct::double as noise_pct,                   -- median offer noise (floored), %
    s.between_month_pct::double as between_month_pct,   -- months' spread beyond noise (tau), %
    s.strength_pct::double as strength_pct,             -- pooled depth over months, %
    s.strength_se_pct::double as strength_se_pct,       -- its standard error, %
    s.depth_ci_low_pct::double as depth_ci_low_pct,     -- its 90 % interval
    s.depth_ci_high_pct::double as depth_ci_high_pct,
    s.p_value::double as p_value,                       -- one-sided P(depth this deep | none)
    s.median_drop_pct::double as median_drop_pct,       -- over months, %
    s.median_recovery_pct::double as median_recovery_pct,
    coalesce(s.dip_verdict, 'not enough evidence')
        as dip_verdict,                                 -- recurring month-end dip? (params)
    case
        when coalesce(s.dip_verdict, 'not enough evidence') <> 'not enough evidence' then 0
        when coalesce(s.months_observed, 0) < h.min_months
            then h.min_months - coalesce(s.months_observed, 0)
        when s.months_for_verdict <= h.max_months_needed
            then greatest(1, s.months_for_verdict - s.months_observed)::integer
    end as months_needed                                -- more complete months for a verdict
from counted as f
cross join params as h
left join signalled as s
    on f.source = s.source and f.vendor = s.vendor and f.gpu_model = s.gpu_model
    and f.gpu_variant is not distinct from s.gpu_variant and f.region_code = s.region_code
    and f.offer_kind = s.offer_kind
left join group_offers as o
    on f.source = o.source and f.vendor = o.vendor and f.gpu_model = o.gpu_model
    and f.gpu_variant is not distinct from o.gpu_variant and f.region_code = o.region_code
    and f.offer_kind = o.offer_kind
order by f.source, f.vendor, f.gpu_model, f.gpu_variant, f.region_code, f.offer_kind, f.month
