/* The cheapest whole single card (gpu_count 1, gpu_fraction 1) per day, source, vendor, region,
   card model AND variant, offer kind and billing period: the reference slices and multi-GPU
   servers are paired with. One row per such key and day, naming the offer it is, so every
   comparison can say which card it used. A NULL variant (the listing did not say) is its own
   key: an unnamed variant is never taken for SXM or PCIe. Ties on price go to the lowest
   offer_id, so a rebuild picks the same card. Incremental by day: each row depends on its own
   day only. */
-- incremental: observed_date
with whole_cards as (
    select
        *,
        count(*) over (
            partition by
                observed_date, source, vendor, region_code, gpu_model, gpu_variant, offer_kind,
                billing_period
        ) as whole_offers
    from intermediate.int_offer_daily
    where gpu_fraction = 1 and gpu_count = 1
        -- an incremental build reads only the rebuilt days (unset in a full build)
        and observed_date >= since_day()
        and counted  -- counted once: a non-direct twin of a direct offer is left out
)

select
    observed_date,
    source,
    vendor,
    vendor_kind,
    region_code,
    region_group,
    gpu_model,
    gpu_variant,                                        -- NULL: the listing did not say
    offer_kind,
    billing_period,
    offer_id as whole_offer_id,                         -- the cheapest whole card of the key
    sku as whole_sku,
    offer_line as whole_offer_line,
    close_price_cny_per_gpu_hour as whole_price_cny_per_gpu_hour,  -- = the instance price
    whole_offers                                        -- whole single cards of the key that day
from whole_cards
qualify
    row_number() over (
        partition by
            observed_date, source, vendor, region_code, gpu_model, gpu_variant, offer_kind,
            billing_period
        order by close_price_cny_per_gpu_hour, offer_id
    ) = 1
