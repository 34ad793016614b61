/* The latest observation of every offer: one row per offer_id, with when it was first and last
   seen. Read from the daily series (its last day's close), not from every observation. */
-- alias: latest_prices
select
    d.offer_id,
    d.source,
    d.vendor,
    d.vendor_kind,
    d.gpu_model,
    d.gpu_variant,
    d.gpu_count,
    d.gpu_fraction,
    d.vram_gb,
    d.offer_kind,
    d.billing_period,
    d.region_code,
    d.country,
    d.province_or_state,
    d.city,
    d.is_tier1_city,
    d.sku,
    d.close_price_amount as price_amount,                   -- as listed, per billing_period
    d.currency,
    d.close_price_cny_per_gpu_hour as price_per_gpu_hour_cny,  -- one whole-GPU equivalent, 1 hour
    d.close_price_usd_per_gpu_hour as price_per_gpu_hour_usd,
    d.close_fx_rate_date as fx_rate_date,
    d.close_available as available,
    d.last_observed_at as last_seen_at,
    min(d.first_observed_at) over (partition by d.offer_id) as first_seen_at,
    d.url
from intermediate.int_offer_daily as d
qualify row_number() over (partition by d.offer_id order by d.observed_date desc) = 1
order by d.gpu_model, price_per_gpu_hour_cny
