/* Regional discount: one row per card, offer kind, billing period, day and region (country and
   region group: province in China, country elsewhere), the region's whole-card price per GPU-hour
   against the reference: CN tier-1 cities for China, the US for every other country. */
with whole_cards as (
    select *
    from intermediate.int_offer_daily
    where gpu_fraction = 1
),

vendor_regions as (
    select
        observed_date,
        gpu_model,
        offer_kind,
        billing_period,
        country,
        region_group,
        vendor,
        median(close_price_cny_per_gpu_hour) as vendor_price_cny_per_gpu_hour
    from whole_cards
    group by observed_date, gpu_model, offer_kind, billing_period, country, region_group, vendor
),

regions as (
    select
        observed_date,
        gpu_model,
        offer_kind,
        billing_period,
        country,
        region_group,
        count(distinct offer_id) as offers,
        count(distinct vendor) as vendors
    from whole_cards
    group by observed_date, gpu_model, offer_kind, billing_period, country, region_group
),

region_prices as (
    select
        observed_date,
        gpu_model,
        offer_kind,
        billing_period,
        country,
        region_group,
        median(vendor_price_cny_per_gpu_hour) as median_price_cny_per_gpu_hour
    from vendor_regions
    group by observed_date, gpu_model, offer_kind, billing_period, country, region_group
),

reference_vendors as (
    select
        observed_date,
        gpu_model,
        offer_kind,
        billing_period,
        case when country = 'CN' then 'CN tier-1 cities' else 'US' end as reference,
        vendor,
        median(close_price_cny_per_gpu_hour) as vendor_price_cny_per_gpu_hour
    from whole_cards
    where (country = 'CN' and is_tier1_city) or country = 'US'
    group by observed_date, gpu_model, offer_kind, billing_period, reference, vendor
),

reference_prices as (
    select
        observed_date,
        gpu_model,
        offer_kind,
        billing_period,
        reference,
        median(vendor_price_cny_per_gpu_hour) as reference_price_cny_per_gpu_hour
    from reference_vendors
    group by observed_date, gpu_model, offer_kind, billing_period, reference
),

with_reference as (
    select
        r.*,
        p.median_price_cny_per_gpu_hour,
        case when r.country = 'CN' then 'CN tier-1 cities' else 'US' end as reference
    from regions as r
    inner join region_prices as p
        on r.observed_date = p.observed_date
        and r.gpu_model = p.gpu_model
        and r.offer_kind = p.offer_kind
        and r.billing_period = p.billing_period
        and r.country = p.country
        and r.region_group = p.region_group
)

select
    w.observed_date as day,
    w.gpu_model,
    w.offer_kind,
    w.billing_period,
    w.country,
    w.region_group,                                     -- province in China, country elsewhere
    w.offers,                                           -- distinct offers in the region that day
    w.vendors,
    w.median_price_cny_per_gpu_hour::decimal(18, 6)
        as median_price_cny_per_gpu_hour,               -- median of per-vendor medians: a vendor
                                                        -- replicating one price counts once
    w.reference,                                        -- 'CN tier-1 cities' | 'US'
    rp.reference_price_cny_per_gpu_hour::decimal(18, 6)
        as reference_price_cny_per_gpu_hour,            -- median of per-vendor medians as well;
                                                        -- null: no reference offer that day
    (100 * (rp.reference_price_cny_per_gpu_hour - w.median_price_cny_per_gpu_hour)
     / nullif(rp.reference_price_cny_per_gpu_hour, 0))::double
        as discount_pct                                 -- positive = cheaper than the reference
from with_reference as w
left join reference_prices as rp
    on w.observed_date = rp.observed_date
    and w.gpu_model = rp.gpu_model
    and w.offer_kind = rp.offer_kind
    and w.billing_period = rp.billing_period
    and w.reference = rp.reference
order by day, w.gpu_model, w.offer_kind, w.billing_period, w.country, w.region_group
