/* Price-change events: one row per observation whose price or availability differs from the same
   offer's previous observation. A missing observation (a failed crawl) is not a change. */
-- incremental: observed_date
with sequenced as (
    select
        offer_id, source, vendor, gpu_model, gpu_fraction, region_code, region_group, offer_kind,
        billing_period, sku, observed_at, observed_date, price_per_gpu_hour_cny, available,
        lag(price_per_gpu_hour_cny) over offer_history as previous_price_cny_per_gpu_hour,
        lag(available) over offer_history as previous_available,
        lag(observed_at) over offer_history as previous_observed_at
    from staging.stg_observations
    window offer_history as (partition by offer_id order by observed_at)
)
select
    *,
    price_per_gpu_hour_cny - previous_price_cny_per_gpu_hour as price_change_cny_per_gpu_hour,
    round(100 * (price_per_gpu_hour_cny - previous_price_cny_per_gpu_hour)
          / previous_price_cny_per_gpu_hour, 4) as price_change_pct,
    case
        when price_per_gpu_hour_cny <> previous_price_cny_per_gpu_hour then 'price'
        else 'availability'
    end as change_kind
from sequenced
where previous_observed_at is not null
  and (price_per_gpu_hour_cny <> previous_price_cny_per_gpu_hour
       or available is distinct from previous_available)
