/* Regional pairs: one row per vendor, offer line (card model and variant, GPU count, slice
   fraction, VRAM, offer kind, billing period), region group (province in China, country
   elsewhere) and UTC day: the vendor's price of that line in the region against the SAME vendor's
   price of the same line in the reference (China: offers in tier-1 cities; elsewhere: the US).
   Comparing a vendor with itself keeps the vendor mix out of the regional gap: a cheap IDC found
   only in one province, or a dear hyperscaler found only in Beijing, pairs with nothing. Each
   side's price is the median of the vendor's offers of the line there (a vendor's sources count
   as one vendor). A region line with no reference offer of that vendor keeps its row, with NULL
   reference price and ratio, so the marts can say why a region has no discount. */
-- incremental: observed_date
with offers as (
    select
        *,
        case when country = 'CN' then 'CN tier-1 cities' else 'US' end as reference,
        (country = 'CN' and is_tier1_city) or country = 'US' as in_reference
    from intermediate.int_offer_daily
    -- an incremental build pairs only the rebuilt days (since_day(); a full build: every day):
    -- each row depends on its own day only
    where observed_date >= since_day()
        and counted  -- counted once: a non-direct twin of a direct offer is left out
),

regions as (
    select
        observed_date,
        vendor,
        offer_line,
        country,
        region_group,
        any_value(reference) as reference,
        any_value(vendor_kind) as vendor_kind,
        any_value(gpu_model) as gpu_model,
        any_value(gpu_variant) as gpu_variant,          -- one value per line (NULL stays NULL)
        any_value(gpu_count) as gpu_count,
        any_value(gpu_fraction) as gpu_fraction,
        any_value(vram_gb) as vram_gb,
        any_value(offer_kind) as offer_kind,
        any_value(billing_period) as billing_period,
        median(close_price_cny_per_gpu_hour) as region_price,
        count(distinct offer_id) as region_offers,
        list(distinct offer_id order by offer_id) as region_offer_ids,
        list(distinct close_price_cny_per_gpu_hour) as region_prices
    from offers
    group by observed_date, vendor, offer_line, country, region_group
),

reference_lines as (
    select
        observed_date,
        vendor,
        offer_line,
        reference,
        median(close_price_cny_per_gpu_hour) as reference_price,
        count(distinct offer_id) as reference_offers,
        list(distinct offer_id order by offer_id) as reference_offer_ids,
        list(distinct close_price_cny_per_gpu_hour) as reference_prices
    from offers
    where in_reference
    group by observed_date, vendor, offer_line, reference
)

select
    r.observed_date,
    r.vendor,
    r.vendor_kind,                                      -- idc|marketplace|gpu_cloud|hyperscaler
    r.offer_line,                                       -- vendor|model|variant|count|fraction|...
    r.gpu_model,
    r.gpu_variant,                                      -- NULL: the listings did not say
    r.gpu_count,
    r.gpu_fraction,
    r.vram_gb,
    r.offer_kind,
    r.billing_period,
    r.country,
    r.region_group,                                     -- province in China, country elsewhere
    r.reference,                                        -- 'CN tier-1 cities' | 'US'
    r.region_price::decimal(18, 6)
        as region_price_cny_per_gpu_hour,               -- median of the vendor's line offers here
    f.reference_price::decimal(18, 6)
        as reference_price_cny_per_gpu_hour,            -- same, in the reference; NULL: none
    (r.region_price / nullif(f.reference_price, 0))::double
        as price_ratio,                                 -- region / reference: 0.8 = 20 % cheaper
    r.region_offers,                                    -- the vendor's offers of the line here
    coalesce(f.reference_offers, 0) as reference_offers, -- ... and in the reference
    len(r.region_prices) as distinct_region_prices,     -- copies of one price count once
    -- distinct prices of both sides together (the region's alone when unpaired)
    len(list_distinct(r.region_prices || coalesce(f.reference_prices, r.region_prices)))
        as distinct_offers,
    r.region_offer_ids,                                 -- the offers behind each side
    f.reference_offer_ids
from regions as r
left join reference_lines as f
    on r.observed_date = f.observed_date
    and r.vendor = f.vendor
    and r.offer_line = f.offer_line
    and r.reference = f.reference
