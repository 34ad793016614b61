/* Slice-to-whole ratio: one row per MIG/vGPU slice offer (gpu_fraction < 1) per day, its hourly
   price against the cheapest whole single card of the same source, vendor, region, card model and
   variant (SXM/PCIe/NVL; an unnamed variant pairs only with an unnamed one), offer kind and
   billing period that day. The two offers differ only in how much of the card they rent. A slice
   without such a whole card that day has no row. Incremental by day: a row depends on its own
   day only (an incremental build reads the rebuilt days; since_day() is 0001-01-01 in a full
   build). */
-- incremental: day
with slices as (
    select *
    from intermediate.int_offer_daily
    where gpu_fraction < 1
        and observed_date >= since_day()
        and counted  -- counted once: a non-direct twin of a direct offer is left out
),

wholes as (
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
    s.offer_line,                                       -- the slice's offer line
    s.offer_id as slice_offer_id,
    s.sku as slice_sku,
    s.gpu_fraction,                                     -- the slice's share of the card: 0.25 = 1/4
    s.vram_gb as slice_vram_gb,
    w.whole_offer_id,                                   -- the whole card it was paired with
    s.close_instance_price_cny_per_hour::decimal(18, 6)
        as slice_price_cny_per_hour,                    -- the slice instance's own hourly price
    w.whole_price_cny_per_gpu_hour::decimal(18, 6)
        as whole_price_cny_per_hour,                    -- lowest whole single card, same day
    (s.close_instance_price_cny_per_hour / nullif(w.whole_price_cny_per_gpu_hour, 0))::double
        as slice_to_whole_ratio,                        -- slice price / whole-card price
    (
        s.close_instance_price_cny_per_hour / nullif(w.whole_price_cny_per_gpu_hour, 0)
        / (s.gpu_count * s.gpu_fraction)
    )::double as per_gpu_premium                        -- ratio / share of a card: 1.0 = pro-rata
from slices as s
inner join wholes as w
    on s.observed_date = w.observed_date
    and s.source = w.source
    and s.vendor = w.vendor
    and s.region_code = w.region_code
    and s.gpu_model = w.gpu_model
    and s.gpu_variant is not distinct from w.gpu_variant
    and s.offer_kind = w.offer_kind
    and s.billing_period = w.billing_period
order by day, s.gpu_model, s.source, s.region_code, s.gpu_fraction, s.offer_id
