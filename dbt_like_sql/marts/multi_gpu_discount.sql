/* Multi-GPU discount: one row per multi-card server offer (gpu_count > 1, whole cards) per day,
   its price per GPU-hour against the cheapest whole single card of the same source, vendor,
   region, card model and variant (an unnamed variant pairs only with an unnamed one), offer kind
   and billing period that day: the two offers differ only in how many cards they rent. A server
   without such a single card that day has no row. The machine (vCPUs, memory, disk per GPU) must
   match too; a held pair (two machines, a machine not stated, a ratio outside the plausible range
   of intermediate.int_pair_rules) is in marts.held_pairs, with its reason, not here. The pairs:
   intermediate.int_like_for_like_pairs. Incremental by day: a row depends on its own day only (an
   incremental build reads the rebuilt days; since_day() is 0001-01-01 in a full build). */
-- grain: server_offer_id, day
-- audit: server_has_cards: server_gpu_count <= 1
-- audit: prices_positive: least(server_price_cny_per_gpu_hour, single_price_cny_per_gpu_hour) <= 0
-- audit: not_itself: server_offer_id = single_offer_id
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
    offer_line,                                         -- the server's offer line
    offer_id as server_offer_id,
    sku as server_sku,
    gpu_count as server_gpu_count,                      -- whole cards in the server
    partner_offer_id as single_offer_id,                -- the single card it was paired with
    price_cny_per_gpu_hour::decimal(18, 6)
        as server_price_cny_per_gpu_hour,               -- the server's price per GPU
    partner_price_cny_per_gpu_hour::decimal(18, 6)
        as single_price_cny_per_gpu_hour,               -- lowest whole single card, same day
    (price_cny_per_gpu_hour / partner_price_cny_per_gpu_hour)::double
        as server_to_single_ratio,                      -- 0.75 = server at 75 % of n x one card
    (100 * (1 - price_cny_per_gpu_hour / partner_price_cny_per_gpu_hour))::double
        as discount_pct                                 -- negative: the server costs more per GPU
from intermediate.int_like_for_like_pairs
where comparison = 'multi_gpu'
    and observed_date >= since_day()
    and held_reason is null  -- a held pair is in marts.held_pairs, with its reason
    and partner_price_cny_per_gpu_hour > 0
order by
    day, gpu_model, source, region_code, offer_kind, billing_period, server_gpu_count,
    server_offer_id
