/* Multi-GPU discount: one row per multi-card server offer (gpu_count > 1, whole cards) per day,
   its price per GPU-hour against the cheapest whole single card of the same source, vendor,
   region, card model and variant (an unnamed variant pairs only with an unnamed one), offer kind
   and billing period that day: the two offers differ only in how many cards they rent. A server
   without such a single card that day has no row. Incremental by day: a row depends on its own
   day only (an incremental build reads the rebuilt days; since_day() is 0001-01-01 in a full
   build). */
-- incremental: day
with servers as (
    select *
    from intermediate.int_offer_daily
    where gpu_fraction = 1 and gpu_count > 1
        and observed_date >= since_day()
        and counted  -- counted once: a non-direct twin of a direct offer is left out
),

singles as (
    select *
    from intermediate.int_whole_card_daily
    where observed_date >= since_day()
)

select
    s.observed_date as day,
    s.source,
    s.vendor,
    s.vendor_kind,                                      -- idc|marketplace|gpu_cloud|hyperscaler
    s.region_code,
    s.region_group,
    s.gpu_model,
    s.gpu_variant,                                      -- both offers' variant; NULL: not stated
    s.offer_kind,
    s.billing_period,
    s.offer_line,                                       -- the server's offer line
    s.offer_id as server_offer_id,
    s.sku as server_sku,
    s.gpu_count as server_gpu_count,                    -- whole cards in the server
    c.whole_offer_id as single_offer_id,                -- the single card it was paired with
    s.close_price_cny_per_gpu_hour::decimal(18, 6)
        as server_price_cny_per_gpu_hour,               -- the server's price per GPU
    c.whole_price_cny_per_gpu_hour::decimal(18, 6)
        as single_price_cny_per_gpu_hour,               -- lowest whole single card, same day
    (s.close_price_cny_per_gpu_hour / c.whole_price_cny_per_gpu_hour)::double
        as server_to_single_ratio,                      -- 0.75 = server at 75 % of n x one card
    (100 * (1 - s.close_price_cny_per_gpu_hour / c.whole_price_cny_per_gpu_hour))::double
        as discount_pct                                 -- negative: the server costs more per GPU
from servers as s
inner join singles as c
    on s.observed_date = c.observed_date
    and s.source = c.source
    and s.vendor = c.vendor
    and s.region_code = c.region_code
    and s.gpu_model = c.gpu_model
    and s.gpu_variant is not distinct from c.gpu_variant
    and s.offer_kind = c.offer_kind
    and s.billing_period = c.billing_period
where c.whole_price_cny_per_gpu_hour > 0
order by
    day, s.gpu_model, s.source, s.region_code, s.offer_kind, s.billing_period, server_gpu_count,
    server_offer_id
