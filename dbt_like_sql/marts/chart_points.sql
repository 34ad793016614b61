/* Chart points: the points of every price-history chart of the report, for every card family
   (the report draws those of pipelines/report/charts.py FAMILIES): per chart, card family, line
   and day, the median over vendors of each vendor's median daily close, so a vendor listing one
   price in twenty regions counts once (as in marts.regional_discount). Hourly billing only:
   monthly packages would pull the lines down. The chart keys and line labels are those of
   pipelines/report/charts.py. */
-- grain: chart, gpu_family, series, day
-- audit: price_positive: price is null or price <= 0
with offers as (
    select
        d.observed_date as day,
        d.gpu_family,
        d.vendor,
        d.offer_id,
        d.gpu_fraction,
        d.offer_kind,
        d.country,
        d.province_or_state,
        d.is_tier1_city,
        d.close_price_cny_per_gpu_hour as price
    from intermediate.int_offer_daily as d
    where d.billing_period = 'hour'
),

lines as (
    select
        'whole-vs-slice' as chart,
        day,
        gpu_family,
        vendor,
        offer_id,
        price,
        case when gpu_fraction < 1 then 'slice' else 'whole card' end as series
    from offers
    where offer_kind = 'on_demand'
    union all
    select
        'region' as chart,
        day,
        gpu_family,
        vendor,
        offer_id,
        price,
        case
            when country = 'CN' and is_tier1_city then 'China tier-1 cities'
            when country = 'CN' and province_or_state in ('Inner Mongolia', 'Guizhou', 'Jiangsu')
                then province_or_state
            when country = 'CN' then 'China, other'
            when country = 'US' then 'US'
            else 'Other countries'
        end as series
    from offers
    where gpu_fraction = 1 and offer_kind = 'on_demand'
    union all
    select
        'spot' as chart,
        day,
        gpu_family,
        vendor,
        offer_id,
        price,
        replace(offer_kind, '_', '-') as series
    from offers
    where gpu_fraction = 1 and offer_kind in ('on_demand', 'spot')
),

per_vendor as (
    select
        chart,
        day,
        gpu_family,
        series,
        vendor,
        median(price) as vendor_price,
        count(distinct offer_id) as offers
    from lines
    group by chart, day, gpu_family, series, vendor
)

select
    chart,                                  -- whole-vs-slice | region | spot
    gpu_family,
    series,                                 -- the chart's line: whole card, US, spot ...
    day,
    median(vendor_price)::double as price,  -- CNY per GPU-hour: the median over vendors
    sum(offers)::integer as offers,
    count(*)::integer as vendors
from per_vendor
group by chart, gpu_family, series, day
order by chart, gpu_family, series, day
