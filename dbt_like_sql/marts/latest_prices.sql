/* The latest observation of every offer: one row per offer_id, with when it was first and last seen. */
-- alias: latest_prices
select
    o.offer_id,
    o.source,
    o.vendor,
    o.vendor_kind,
    o.gpu_model,
    o.gpu_variant,
    o.gpu_count,
    o.gpu_fraction,
    o.vram_gb,
    o.offer_kind,
    o.billing_period,
    o.region_code,
    o.country,
    o.province_or_state,
    o.city,
    o.is_tier1_city,
    o.sku,
    o.price_amount,                     -- as listed, per billing_period
    o.currency,
    o.price_per_gpu_hour_cny,           -- one whole-GPU equivalent for one hour
    o.price_per_gpu_hour_usd,
    o.fx_rate_date,
    o.available,
    o.observed_at as last_seen_at,
    min(o.observed_at) over (partition by o.offer_id) as first_seen_at,
    o.url
from observations as o
qualify row_number() over (partition by o.offer_id order by o.observed_at desc) = 1
order by o.gpu_model, o.price_per_gpu_hour_cny
