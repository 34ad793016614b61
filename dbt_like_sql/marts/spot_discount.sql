/* Spot discount: one row per spot offer per day, its price per GPU-hour against the on-demand
   offer of the same instance type at the same source, vendor and region that day. Pairing, in
   order of preference: 'sku', the on-demand offer with the spot offer's own SKU (the vendor's
   instance type, e.g. p4d.24xlarge); 'line', when no on-demand offer has that SKU, the on-demand
   offer of the same line (card model and variant, GPU count, slice fraction, VRAM) and machine
   (vCPUs, memory, disk per GPU), the cheapest first. Both offers always share the billing period:
   a monthly package is not an instance type's regular price. A pair of two machines, of machines
   not stated, or with spot outside the plausible range (intermediate.int_pair_rules: spot above
   on-demand is held) is not here but in marts.held_pairs, with its reason; a spot offer with no
   on-demand partner that day has no row. Ties go to the lowest on-demand offer_id. The pairs:
   intermediate.int_like_for_like_pairs. Incremental by day: a row depends on its own day only
   (an incremental build reads the rebuilt days; since_day() is 0001-01-01 in a full build). */
-- grain: spot_offer_id, day
-- audit: prices_positive: least(spot_price_cny_per_gpu_hour, on_demand_price_cny_per_gpu_hour) <= 0
-- audit: pairing_known: pairing not in ('sku', 'line')
-- audit: not_itself: spot_offer_id = on_demand_offer_id
-- incremental: day
select
    observed_date as day,
    source,
    vendor,
    vendor_kind,                                        -- idc|marketplace|gpu_cloud|hyperscaler
    region_code,
    region_group,
    gpu_model,
    gpu_variant,                                        -- the spot offer's; NULL: not stated
    gpu_count,
    gpu_fraction,
    billing_period,
    offer_line,                                         -- the spot offer's line
    offer_id as spot_offer_id,
    sku as spot_sku,
    partner_offer_id as on_demand_offer_id,             -- the on-demand offer it was paired with
    partner_sku as on_demand_sku,
    pairing,                                            -- 'sku': same instance type | 'line'
    partner_price_cny_per_gpu_hour::decimal(18, 6)
        as on_demand_price_cny_per_gpu_hour,            -- the paired on-demand offer
    price_cny_per_gpu_hour::decimal(18, 6)
        as spot_price_cny_per_gpu_hour,                 -- the spot offer
    (price_cny_per_gpu_hour / partner_price_cny_per_gpu_hour)::double
        as spot_to_on_demand_ratio,                     -- 0.2 = spot at a fifth of on-demand
    (100 * (1 - price_cny_per_gpu_hour / partner_price_cny_per_gpu_hour))::double
        as spot_discount_pct                            -- positive: spot cheaper than on-demand
from intermediate.int_like_for_like_pairs
where comparison = 'spot'
    and observed_date >= since_day()
    and held_reason is null  -- a held pair is in marts.held_pairs, with its reason
order by day, gpu_model, source, region_code, gpu_count, gpu_fraction, spot_offer_id
