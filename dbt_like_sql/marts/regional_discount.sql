/* Regional discount: one row per card, offer kind, billing period, day and region (country and
   region group: province in China, country elsewhere) with whole-card offers (gpu_fraction 1, any
   GPU count): how much cheaper the region is than the reference (China: tier-1 cities; elsewhere:
   the US) at the SAME vendor for the same offer line. Each vendor's ratio is the median of its
   line ratios (region / reference, intermediate.int_regional_pairs); the region's ratio is the
   median across vendors, so a vendor with many lines or many regional copies counts once, and a
   vendor present on one side only counts not at all. A region with offers but no vendor that also
   has a reference offer of the same line keeps its row with a NULL discount and
   vendors_paired = 0. Incremental by day: a row depends on its own day only (an incremental
   build reads the rebuilt days; getvariable('since') is unset in a full build). */
-- incremental: day
with pairs as (
    select *
    from intermediate.int_regional_pairs
    where gpu_fraction = 1
        and observed_date >= coalesce(getvariable('since')::date, date '0001-01-01')
),

vendor_ratios as (
    select
        observed_date,
        gpu_model,
        offer_kind,
        billing_period,
        country,
        region_group,
        vendor,
        median(price_ratio) as vendor_ratio,            -- NULL: no paired line
        median(region_price_cny_per_gpu_hour) filter (where price_ratio is not null)
            as paired_region_price,
        median(reference_price_cny_per_gpu_hour) as paired_reference_price,
        median(region_price_cny_per_gpu_hour) as any_region_price
    from pairs
    group by observed_date, gpu_model, offer_kind, billing_period, country, region_group, vendor
),

evidence as (
    select
        observed_date,
        gpu_model,
        offer_kind,
        billing_period,
        country,
        region_group,
        any_value(reference) as reference,
        count(distinct vendor) as vendors,
        count(distinct vendor) filter (where price_ratio is not null) as vendors_paired,
        coalesce(list_unique(flatten(
            list(region_offer_ids || reference_offer_ids) filter (where price_ratio is not null)
        )), 0) as offers,
        coalesce(sum(distinct_offers) filter (where price_ratio is not null), 0)
            as distinct_offers
    from pairs
    group by observed_date, gpu_model, offer_kind, billing_period, country, region_group
),

region_ratios as (
    select
        observed_date,
        gpu_model,
        offer_kind,
        billing_period,
        country,
        region_group,
        median(vendor_ratio) as median_vendor_ratio,
        min(vendor_ratio) as ratio_low,
        max(vendor_ratio) as ratio_high,
        median(paired_region_price) as paired_region_price,
        median(paired_reference_price) as paired_reference_price,
        median(any_region_price) as any_region_price
    from vendor_ratios
    group by observed_date, gpu_model, offer_kind, billing_period, country, region_group
)

select
    e.observed_date as day,
    e.gpu_model,
    e.offer_kind,
    e.billing_period,
    e.country,
    e.region_group,                                     -- province in China, country elsewhere
    'same vendor' as comparison,                        -- each vendor against itself
    e.reference,                                        -- 'CN tier-1 cities' | 'US'
    e.vendors,                                          -- vendors with whole cards in the region
    e.vendors_paired,                                   -- ... that also list the line there
    e.offers,                                           -- distinct offer ids paired (both sides)
    -- distinct (vendor, line, price) paired: a price copied to many regions is one
    e.distinct_offers::bigint as distinct_offers,
    -- median over paired vendors of their region price (all vendors if none)
    coalesce(r.paired_region_price, r.any_region_price)::decimal(18, 6)
        as median_price_cny_per_gpu_hour,
    -- the same vendors' reference price; NULL: no vendor paired
    r.paired_reference_price::decimal(18, 6)
        as reference_price_cny_per_gpu_hour,
    r.ratio_low,                                        -- lowest vendor ratio (region/reference)
    r.ratio_high,                                       -- highest vendor ratio
    -- positive = cheaper than the reference; from the median vendor ratio
    (100 * (1 - r.median_vendor_ratio))::double as discount_pct
from evidence as e
inner join region_ratios as r
    on e.observed_date = r.observed_date
    and e.gpu_model = r.gpu_model
    and e.offer_kind = r.offer_kind
    and e.billing_period = r.billing_period
    and e.country = r.country
    and e.region_group = r.region_group
order by day, e.gpu_model, e.offer_kind, e.billing_period, e.country, e.region_group
