/* Month-end dips to alert (rule `month_end_dip`, pipelines/alerts): a group of
   marts.month_end_dip whose recurring dip verdict holds, on its latest complete local month
   (complete once the next month's first days are in) when that month's own verdict holds too.
   A link and the exchange rate come from the group's current hourly offers
   (marts.latest_prices). */
-- grain: source, vendor, gpu_model, gpu_variant, region_code, offer_kind, month
-- audit: dip_above_zero: depth_ci_low_pct is null or depth_ci_low_pct <= 0
with latest as (
    select
        *,
        max(month) filter (where offers_compared > 0) over (
            partition by source, vendor, gpu_model, gpu_variant, region_code, offer_kind
        ) as latest_month
    from marts.month_end_dip
),

offers as (
    select
        source,
        gpu_model,
        region_code,
        offer_kind,
        min(url) as url,
        avg(price_per_gpu_hour_usd::double / price_per_gpu_hour_cny::double) as usd_per_cny,
        any_value(country) as country,
        any_value(province_or_state) as province_or_state,
        any_value(city) as city
    from marts.latest_prices
    where billing_period = 'hour'
    group by source, gpu_model, region_code, offer_kind
)

select
    l.month,
    l.local_time_zone,
    l.source,
    l.vendor,
    l.gpu_model,
    l.gpu_variant,
    l.region_code,
    l.region_group,
    l.offer_kind,
    l.currency,
    l.offers_compared,
    l.baseline_price_cny_per_gpu_hour,
    l.month_end_price_cny_per_gpu_hour,
    l.next_start_price_cny_per_gpu_hour,
    l.dip_pct,
    l.drop_pct,
    l.recovery_pct,
    l.months_observed,
    l.months_dipped,
    l.offers_followed,
    l.offer_months,
    l.positive_offer_months,
    l.p_value,
    l.noise_pct,
    l.strength_pct,
    l.strength_se_pct,
    l.depth_ci_low_pct,
    l.depth_ci_high_pct,
    f.url,
    f.usd_per_cny,                  -- the group's current hourly offers' exchange rate
    f.country,
    f.province_or_state,
    f.city
from latest as l
left join offers as f
    on l.source = f.source
    and l.gpu_model = f.gpu_model
    and l.region_code = f.region_code
    and l.offer_kind = f.offer_kind
where l.month = l.latest_month and l.month_verdict = 'holds' and l.dip_verdict = 'holds'
order by l.source, l.gpu_model, l.region_code, l.offer_kind
