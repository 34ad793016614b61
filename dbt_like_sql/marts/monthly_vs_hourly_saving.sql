/* Monthly-package saving: one row per monthly offer per day, its price per GPU-hour (a month =
   730 h) against the hourly offer of the same source, vendor, region, offer kind and line (card
   model and variant, GPU count, slice fraction, VRAM) that day: how much the package saves
   against paying that hourly price for a whole month. Pairing: 'sku', the hourly offer with the
   monthly offer's own SKU when the line has one; else 'line', the cheapest hourly offer of the
   line. A monthly offer with no hourly partner that day has no row. Ties go to the lowest hourly
   offer_id. Incremental by day: a row depends on its own day only (an incremental build reads
   the rebuilt days; since_day() is 0001-01-01 in a full build). */
-- incremental: day
with monthly as (
    select *
    from intermediate.int_offer_daily
    where billing_period = 'month'
        and observed_date >= since_day()
        and counted  -- counted once: a non-direct twin of a direct offer is left out
),

hourly as (
    select *
    from intermediate.int_offer_daily
    where billing_period = 'hour' and close_price_cny_per_gpu_hour > 0
        and observed_date >= since_day()
        and counted  -- counted once: a non-direct twin of a direct offer is left out
),

candidates as (
    select
        m.*,
        h.offer_id as hourly_offer_id,
        h.sku as hourly_sku,
        h.close_price_cny_per_gpu_hour as hourly_price,
        case when m.sku = h.sku then 'sku' else 'line' end as pairing
    from monthly as m
    inner join hourly as h
        on m.observed_date = h.observed_date
        and m.source = h.source
        and m.vendor = h.vendor
        and m.region_code = h.region_code
        and m.offer_kind = h.offer_kind
        and m.gpu_model = h.gpu_model
        and m.gpu_variant is not distinct from h.gpu_variant
        and m.gpu_count = h.gpu_count
        and m.gpu_fraction = h.gpu_fraction
        and m.vram_gb = h.vram_gb
    qualify
        row_number() over (
            partition by m.offer_id, m.observed_date
            order by (m.sku = h.sku) desc, h.close_price_cny_per_gpu_hour asc, h.offer_id asc
        ) = 1
)

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
    hourly_offer_id,                                    -- the hourly offer it was paired with
    hourly_sku,
    pairing,                                            -- 'sku': same SKU | 'line'
    hourly_price::decimal(18, 6)
        as hourly_price_cny_per_gpu_hour,               -- the paired hourly offer
    close_price_cny_per_gpu_hour::decimal(18, 6)
        as monthly_price_cny_per_gpu_hour,              -- the monthly offer / 730 h
    (100 * (hourly_price - close_price_cny_per_gpu_hour) / hourly_price)::double
        as saving_pct                                   -- positive = the package is cheaper
from candidates
order by
    day, gpu_model, source, region_code, gpu_fraction, gpu_count, offer_kind, monthly_offer_id
