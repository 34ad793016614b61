/* Monthly-package saving: one row per source, vendor, region, card, slice fraction, GPU count,
   offer kind and day with both an hourly and a monthly price: how much the monthly package
   (per GPU-hour, a month = 730 h) saves against paying the hourly price for a whole month. */
with priced as (
    select
        observed_date,
        source,
        vendor,
        region_code,
        region_group,
        gpu_model,
        gpu_fraction,
        gpu_count,
        offer_kind,
        min(close_price_cny_per_gpu_hour) filter (where billing_period = 'hour')
            as hourly_price_cny_per_gpu_hour,
        min(close_price_cny_per_gpu_hour) filter (where billing_period = 'month')
            as monthly_price_cny_per_gpu_hour
    from intermediate.int_offer_daily
    where billing_period in ('hour', 'month')
    group by
        observed_date, source, vendor, region_code, region_group, gpu_model, gpu_fraction,
        gpu_count, offer_kind
)

select
    observed_date as day,
    source,
    vendor,
    region_code,
    region_group,
    gpu_model,
    gpu_fraction,
    gpu_count,
    offer_kind,
    hourly_price_cny_per_gpu_hour::decimal(18, 6)
        as hourly_price_cny_per_gpu_hour,               -- lowest hourly offer
    monthly_price_cny_per_gpu_hour::decimal(18, 6)
        as monthly_price_cny_per_gpu_hour,              -- lowest monthly offer / 730 h
    (100 * (hourly_price_cny_per_gpu_hour - monthly_price_cny_per_gpu_hour)
     / hourly_price_cny_per_gpu_hour)::double
        as saving_pct                                   -- positive = the package is cheaper
from priced
where hourly_price_cny_per_gpu_hour > 0 and monthly_price_cny_per_gpu_hour is not null
order by day, gpu_model, source, region_code, gpu_fraction, gpu_count, offer_kind
