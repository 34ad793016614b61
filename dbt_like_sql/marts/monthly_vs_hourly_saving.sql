/* Monthly-package saving: one row per monthly offer per day, its price per GPU-hour (a month = 730
   h) against the hourly offer of the same source, vendor, region, offer kind and line (card model
   and variant, GPU count, slice fraction, VRAM) that day: how much the package saves against
   paying that hourly price for a whole month. Pairing: 'sku', the hourly offer with the monthly
   offer's own SKU when the line has one; else 'line', the cheapest hourly offer of the line. A
   monthly offer with no hourly partner that day has no row. Ties go to the lowest hourly offer_id.
   The machine (vCPUs, memory, disk per GPU) must match too; a held pair (two machines, a machine
   not stated, a ratio outside the plausible range of intermediate.int_pair_rules) is in
   marts.held_pairs, with its reason, not here. The pairs: intermediate.int_like_for_like_pairs.
   Incremental by day: a row depends on its own day only (an incremental build reads the rebuilt
   days; since_day() is 0001-01-01 in a full build). */
-- grain: monthly_offer_id, day
-- audit: prices_positive: least(hourly_price_cny_per_gpu_hour, monthly_price_cny_per_gpu_hour) <= 0
-- audit: pairing_known: pairing not in ('sku', 'line')
-- audit: not_itself: monthly_offer_id = hourly_offer_id
-- incremental: day
select
    observed_date as day,
    source,
    vendor,
    vendor_kind,                                        -- idc|marketplace|gpu_cloud|hyperscaler
    region_code,
    region_group,
    gpu_model,
    gpu_variant,                                        -- both offers'; NULL: not stated
    gpu_fraction,
    gpu_count,
    offer_kind,
    offer_line,                                         -- the monthly offer's line
    offer_id as monthly_offer_id,
    sku as monthly_sku,
    partner_offer_id as hourly_offer_id,                -- the hourly offer it was paired with
    partner_sku as hourly_sku,
    pairing,                                            -- 'sku': same SKU | 'line'
    partner_price_cny_per_gpu_hour::decimal(18, 6)
        as hourly_price_cny_per_gpu_hour,               -- the paired hourly offer
    price_cny_per_gpu_hour::decimal(18, 6)
        as monthly_price_cny_per_gpu_hour,              -- the monthly offer / 730 h
    (
        100 * (partner_price_cny_per_gpu_hour - price_cny_per_gpu_hour)
        / partner_price_cny_per_gpu_hour
    )::double as saving_pct                             -- positive = the package is cheaper
from intermediate.int_like_for_like_pairs
where comparison = 'monthly_vs_hourly'
    and observed_date >= since_day()
    and held_reason is null  -- a held pair is in marts.held_pairs, with its reason
order by
    day, gpu_model, source, region_code, gpu_fraction, gpu_count, offer_kind, monthly_offer_id
