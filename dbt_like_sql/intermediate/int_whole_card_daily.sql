/* The cheapest whole single card (gpu_count 1, gpu_fraction 1) per day, source, vendor, region,
   card model AND variant, offer kind and billing period: the reference slices and multi-GPU
   servers are paired with. One row per such key and day, naming the offer it is, so every
   comparison can say which card it used. A NULL variant (the listing did not say) is its own
   key: an unnamed variant is never taken for SXM or PCIe. Ties on price go to the lowest
   offer_id, so a rebuild picks the same card (a NULL price sorts last, as in an order by).
   Incremental by day: each row depends on its own day only.
   One group-by picks the card (arg_min over price, then offer_id), not a row_number() window:
   DuckDB sized the window's partitions for the join estimate (10.7 million rows at a year)
   where an hour rebuilds about 1,300, and that sizing cost more than the rows. */
-- incremental: observed_date
with cheapest as (
    select
        observed_date, source, vendor, region_code, gpu_model, gpu_variant, offer_kind,
        billing_period,
        -- the cheapest card's row; a struct key orders its NULL price last, ties by offer_id
        arg_min(
            {
                'vendor_kind': vendor_kind,
                'region_group': region_group,
                'offer_id': offer_id,
                'sku': sku,
                'offer_line': offer_line,
                'price': close_price_cny_per_gpu_hour
            },
            {
                'price': close_price_cny_per_gpu_hour,
                'offer_id': offer_id
            }
        ) as card,
        count(*) as whole_offers
    from intermediate.int_offer_daily
    where gpu_fraction = 1 and gpu_count = 1
        and observed_date >= since_day()
        and counted  -- counted once: a non-direct twin of a direct offer is left out
    group by
        observed_date, source, vendor, region_code, gpu_model, gpu_variant, offer_kind,
        billing_period
)

select
    c.observed_date,
    c.source,
    c.vendor,
    c.card.vendor_kind,
    c.region_code,
    c.card.region_group,
    c.gpu_model,
    c.gpu_variant,                                      -- NULL: the listing did not say
    c.offer_kind,
    c.billing_period,
    c.card.offer_id as whole_offer_id,                  -- the cheapest whole card of the key
    c.card.sku as whole_sku,
    c.card.offer_line as whole_offer_line,
    c.card.price as whole_price_cny_per_gpu_hour,       -- = the instance price
    c.whole_offers                                      -- whole single cards of the key that day
from cheapest as c
