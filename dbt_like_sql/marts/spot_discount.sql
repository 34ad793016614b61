/* Spot discount: one row per spot offer per day, its price per GPU-hour against the on-demand
   offer of the same instance type at the same source, vendor and region that day. Pairing, in
   order of preference: 'sku', the on-demand offer with the spot offer's own SKU (the vendor's
   instance type, e.g. p4d.24xlarge); 'line', when no on-demand offer has that SKU, the cheapest
   on-demand offer of the same line (card model and variant, GPU count, slice fraction, VRAM).
   Both offers always share the billing period: a monthly package is not an instance type's
   regular price. Spot at or above on-demand stays in, with a negative discount; a spot offer with
   no on-demand partner that day has no row. Ties go to the lowest on-demand offer_id.
   Incremental by day: a row depends on its own day only (an incremental build reads the rebuilt
   days; since_day() is 0001-01-01 in a full build). */
-- incremental: day
with spot as (
    select *
    from intermediate.int_offer_daily
    where offer_kind = 'spot'
        and observed_date >= since_day()
        and counted  -- counted once: a non-direct twin of a direct offer is left out
),

on_demand as (
    select *
    from intermediate.int_offer_daily
    where offer_kind = 'on_demand' and close_price_cny_per_gpu_hour > 0
        and observed_date >= since_day()
        and counted  -- counted once: a non-direct twin of a direct offer is left out
),

candidates as (
    select
        s.*,
        o.offer_id as on_demand_offer_id,
        o.sku as on_demand_sku,
        o.close_price_cny_per_gpu_hour as on_demand_price,
        case when s.sku = o.sku then 'sku' else 'line' end as pairing
    from spot as s
    inner join on_demand as o
        on s.observed_date = o.observed_date
        and s.source = o.source
        and s.vendor = o.vendor
        and s.region_code = o.region_code
        and s.billing_period = o.billing_period
        and (
            s.sku = o.sku
            or (
                s.gpu_model = o.gpu_model
                and s.gpu_variant is not distinct from o.gpu_variant
                and s.gpu_count = o.gpu_count
                and s.gpu_fraction = o.gpu_fraction
                and s.vram_gb = o.vram_gb
            )
        )
    qualify
        row_number() over (
            partition by s.offer_id, s.observed_date
            order by (s.sku = o.sku) desc, o.close_price_cny_per_gpu_hour asc, o.offer_id asc
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
    gpu_variant,                                        -- the spot offer's; NULL: not stated
    gpu_count,
    gpu_fraction,
    billing_period,
    offer_line,                                         -- the spot offer's line
    offer_id as spot_offer_id,
    sku as spot_sku,
    on_demand_offer_id,                                 -- the on-demand offer it was paired with
    on_demand_sku,
    pairing,                                            -- 'sku': same instance type | 'line'
    on_demand_price::decimal(18, 6)
        as on_demand_price_cny_per_gpu_hour,            -- the paired on-demand offer
    close_price_cny_per_gpu_hour::decimal(18, 6)
        as spot_price_cny_per_gpu_hour,                 -- the spot offer
    (close_price_cny_per_gpu_hour / on_demand_price)::double
        as spot_to_on_demand_ratio,                     -- 0.2 = spot at a fifth of on-demand
    (100 * (1 - close_price_cny_per_gpu_hour / on_demand_price))::double
        as spot_discount_pct                            -- negative: spot dearer than on-demand
from candidates
order by day, gpu_model, source, region_code, gpu_count, gpu_fraction, spot_offer_id
