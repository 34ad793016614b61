-- Every current offer, with the columns the advisor's Offer reads (pipelines/advisor/offers.py),
-- but those whose latest price is held back as a possible outlier (marts.price_outliers: far from
-- its card's market, not yet confirmed by a later crawl), as marts.cheapest_offers leaves them out,
-- and those older than the max age (by default the horizon, price_horizon_days()). Filled in
-- below: the latest prices with their age (pipelines/query/sql/aged_latest_prices.sql), the held
-- test (not_held_predicate(), pipelines/warehouse/sql_files.py) and the age test
-- (pipelines/query/ages.py, within_age_sql).
select
    offer_id,
    source,
    vendor,
    vendor_kind,
    gpu_model,
    gpu_variant,
    gpu_count,
    gpu_fraction,
    vram_gb,
    offer_kind,
    billing_period,
    price_amount,
    currency,
    price_per_gpu_hour_cny,
    price_per_gpu_hour_usd,
    region_code,
    country,
    province_or_state,
    city,
    sku,
    available,
    last_seen_at,
    price_as_of,
    price_age_days,
    url,
    price_basis,
    reaches_via,
    counted
from ({aged_latest_prices})
where {not_held} and {within_age}
