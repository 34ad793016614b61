/* Chart line days: the points of every price-history chart of the report (marts.chart_points,
   a view of this table, adds where each line breaks), one row per chart, card family, line,
   calendar and day: the median over vendors of each vendor's median daily close, so a vendor
   listing one price in twenty regions counts once (as in marts.regional_discount), with the
   vendors behind it. Hourly billing only: monthly packages would pull the lines down. The chart
   keys and line labels are those of pipelines/report/charts.py. One line per calendar (its
   sources' calendar: intermediate.int_source_days): two archives list different vendors, so a
   median mixing their days would swing between their vendor sets.
   Incremental by day: a point reads its own day only (since_day(): 0001-01-01 in a full build);
   what a point shares with its line's other points (the gap to the previous one, the vendor set
   it changes, the segment) is the view's, read when a chart is drawn. */
-- grain: chart, gpu_family, series, calendar, day
-- audit: price_positive: price is null or price <= 0
-- audit: has_vendors: vendors < 1 or len(vendor_list) <> vendors
-- incremental: day
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
        d.close_price_cny_per_gpu_hour as price,
        s.calendar
    from intermediate.int_offer_daily as d
    inner join intermediate.int_source_days as s on d.source = s.source and d.observed_date = s.day
    where d.billing_period = 'hour'
        -- the rebuilt days only (since_day(): 0001-01-01 in a full build)
        and d.observed_date >= since_day() and s.day >= since_day()
),

lines as (
    select
        'whole-vs-slice' as chart,
        day,
        gpu_family,
        calendar,
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
        calendar,
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
        calendar,
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
        calendar,
        vendor,
        median(price) as vendor_price,
        count(distinct offer_id) as offers
    from lines
    group by chart, day, gpu_family, series, calendar, vendor
)

select
    chart,                                  -- whole-vs-slice | region | spot
    gpu_family,
    series,                                 -- the chart's line: whole card, US, spot ...
    calendar,                               -- 'crawl', or the archive the points come from
    day,
    median(vendor_price)::double as price,  -- CNY per GPU-hour: the median over vendors
    sum(offers)::integer as offers,
    count(*)::integer as vendors,
    list(vendor order by vendor) as vendor_list  -- the vendors behind the median
from per_vendor
group by chart, gpu_family, series, calendar, day
