/* Spot discount: one row per source, vendor, region, card, slice fraction and day with both an
   on-demand and a spot hourly price: the lowest spot price per GPU-hour against the lowest
   on-demand one. Spot at or above on-demand stays in, with a negative discount. */
with hourly as (
    select
        observed_date,
        source,
        vendor,
        region_code,
        region_group,
        gpu_model,
        gpu_fraction,
        min(close_price_cny_per_gpu_hour) filter (where offer_kind = 'on_demand')
            as on_demand_price_cny_per_gpu_hour,
        min(close_price_cny_per_gpu_hour) filter (where offer_kind = 'spot')
            as spot_price_cny_per_gpu_hour
    from intermediate.int_offer_daily
    where billing_period = 'hour'
    group by observed_date, source, vendor, region_code, region_group, gpu_model, gpu_fraction
)

select
    observed_date as day,
    source,
    vendor,
    region_code,
    region_group,
    gpu_model,
    gpu_fraction,
    on_demand_price_cny_per_gpu_hour::decimal(18, 6)
        as on_demand_price_cny_per_gpu_hour,            -- lowest on-demand hourly offer
    spot_price_cny_per_gpu_hour::decimal(18, 6)
        as spot_price_cny_per_gpu_hour,                 -- lowest spot hourly offer
    (spot_price_cny_per_gpu_hour / on_demand_price_cny_per_gpu_hour)::double
        as spot_to_on_demand_ratio,
    (100 * (1 - spot_price_cny_per_gpu_hour / on_demand_price_cny_per_gpu_hour))::double
        as spot_discount_pct                            -- negative: spot dearer than on-demand
from hourly
where on_demand_price_cny_per_gpu_hour > 0 and spot_price_cny_per_gpu_hour is not null
order by day, gpu_model, source, region_code, gpu_fraction
