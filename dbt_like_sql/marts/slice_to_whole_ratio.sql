/* Slice-to-whole ratio: one row per MIG/vGPU slice offer (gpu_fraction < 1) per day, its hourly
   price against the cheapest whole single card of the same source, vendor, region, card model and
   variant (SXM/PCIe/NVL; an unnamed variant pairs only with an unnamed one), offer kind and
   billing period that day. The two offers differ only in how much of the card they rent. A slice
   without such a whole card that day has no row. The machine (vCPUs, memory, disk per GPU) must
   match too; a held pair (two machines, a machine not stated, a ratio outside the plausible range
   of intermediate.int_pair_rules) is in marts.held_pairs, with its reason, not here. The pairs:
   intermediate.int_like_for_like_pairs. Incremental by day: a row depends on its own day only (an
   incremental build reads the rebuilt days; since_day() is 0001-01-01 in a full build). */
-- grain: slice_offer_id, day
-- audit: is_a_slice: gpu_fraction <= 0 or gpu_fraction >= 1
-- audit: prices_positive: least(slice_price_cny_per_hour, whole_price_cny_per_hour) <= 0
-- audit: not_itself: slice_offer_id = whole_offer_id
-- incremental: day
select
    observed_date as day,
    source,
    vendor,
    vendor_kind,                                        -- idc|marketplace|gpu_cloud|hyperscaler
    region_code,
    region_group,
    gpu_model,
    gpu_variant,                                        -- both offers' variant; NULL: not stated
    offer_kind,
    billing_period,
    offer_line,                                         -- the slice's offer line
    offer_id as slice_offer_id,
    sku as slice_sku,
    gpu_fraction,                                       -- the slice's share of the card: 0.25 = 1/4
    vram_gb as slice_vram_gb,
    partner_offer_id as whole_offer_id,                 -- the whole card it was paired with
    instance_price_cny_per_hour::decimal(18, 6)
        as slice_price_cny_per_hour,                    -- the slice instance's own hourly price
    partner_price_cny_per_gpu_hour::decimal(18, 6)
        as whole_price_cny_per_hour,                    -- lowest whole single card, same day
    (instance_price_cny_per_hour / nullif(partner_price_cny_per_gpu_hour, 0))::double
        as slice_to_whole_ratio,                        -- slice price / whole-card price
    (
        instance_price_cny_per_hour / nullif(partner_price_cny_per_gpu_hour, 0)
        / (gpu_count * gpu_fraction)
    )::double as per_gpu_premium                        -- ratio / share of a card: 1.0 = pro-rata
from intermediate.int_like_for_like_pairs
where comparison = 'slice_to_whole'
    and observed_date >= since_day()
    and held_reason is null  -- a held pair is in marts.held_pairs, with its reason
order by day, gpu_model, source, region_code, gpu_fraction, slice_offer_id
