/* Chart points: the points of every price-history chart of the report, for every card family
   (the report draws those of pipelines/report/charts.py FAMILIES): per chart, card family, line,
   calendar and day, the median over vendors of each vendor's median daily close, so a vendor
   listing one price in twenty regions counts once (as in marts.regional_discount). Hourly
   billing only: monthly packages would pull the lines down. The chart keys and line labels are
   those of pipelines/report/charts.py.
   One line per calendar (intermediate.int_source_calendars: the live crawls, or one archive):
   two archives list different vendors, so a median mixing their days would swing between their
   vendor sets. A line breaks (`segment` grows) where two points are further apart than the
   calendar's cadence allows, and where the set of vendors behind the median changed: a median is
   drawn only over one vendor set, and the point where the set changes says so
   (vendor_set_change: who joined, who left). */
-- grain: chart, gpu_family, series, calendar, day
-- audit: price_positive: price is null or price <= 0
-- audit: change_said: vendor_set_changed = (vendor_set_change is null)
-- audit: breaks_at_changes: (vendor_set_changed or gap_days > max_gap_days) and not starts_segment
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
        c.calendar,
        c.max_gap_days
    from intermediate.int_offer_daily as d
    inner join intermediate.int_source_calendars as c on d.source = c.source
    where d.billing_period = 'hour'
),

lines as (
    select
        'whole-vs-slice' as chart,
        day,
        gpu_family,
        calendar,
        max_gap_days,
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
        max_gap_days,
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
        max_gap_days,
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
        max(max_gap_days) as max_gap_days,
        median(price) as vendor_price,
        count(distinct offer_id) as offers
    from lines
    group by chart, day, gpu_family, series, calendar, vendor
),

points as (
    select
        chart,
        gpu_family,
        series,
        calendar,
        day,
        median(vendor_price)::double as price,
        sum(offers)::integer as offers,
        count(*)::integer as vendors,
        max(max_gap_days) as max_gap_days,
        lag(day) over (
            partition by chart, gpu_family, series, calendar order by day
        ) as previous_day
    from per_vendor
    group by chart, gpu_family, series, calendar, day
),

-- the vendors of a point that its line's previous point did not have, and the other way round:
-- a vendor listed on only one of the two days (per_vendor has one row per vendor and day)
set_changes as (
    select
        p.chart,
        p.gpu_family,
        p.series,
        p.calendar,
        p.day,
        case when bool_or(v.day = p.day) then 'joined' else 'left' end as set_change,
        v.vendor
    from points as p
    inner join per_vendor as v
        on
        p.chart = v.chart and p.gpu_family = v.gpu_family and p.series = v.series
        and p.calendar = v.calendar and v.day in (p.day, p.previous_day)
    where p.previous_day is not null   -- a line's first point changes no set
    group by p.chart, p.gpu_family, p.series, p.calendar, p.day, v.vendor
    having count(*) = 1
),

changes as (
    select
        chart,
        gpu_family,
        series,
        calendar,
        day,
        count(*) filter (where set_change = 'joined')::integer as vendors_joined,
        count(*) filter (where set_change = 'left')::integer as vendors_left,
        concat_ws(
            '; ',
            'joined: '
            || string_agg(vendor, ', ' order by vendor) filter (where set_change = 'joined'),
            'left: ' || string_agg(vendor, ', ' order by vendor) filter (where set_change = 'left')
        ) as vendor_set_change
    from set_changes
    group by chart, gpu_family, series, calendar, day
),

marked as (
    select
        p.*,
        (p.day - p.previous_day)::integer as gap_days,
        coalesce(c.vendors_joined, 0) as vendors_joined,
        coalesce(c.vendors_left, 0) as vendors_left,
        c.vendor_set_change,
        c.vendor_set_change is not null as vendor_set_changed
    from points as p
    left join changes as c
        on
        p.chart = c.chart and p.gpu_family = c.gpu_family and p.series = c.series
        and p.calendar = c.calendar and p.day = c.day
)

select
    chart,                                  -- whole-vs-slice | region | spot
    gpu_family,
    series,                                 -- the chart's line: whole card, US, spot ...
    calendar,                               -- 'crawl', or the archive the points come from
    day,
    price,                                  -- CNY per GPU-hour: the median over vendors
    offers,
    vendors,
    gap_days,                               -- days since the line's previous point
    max_gap_days,                           -- from its calendar's cadence: a longer gap breaks it
    vendor_set_changed,                     -- not the previous point's vendors: the line breaks
    vendors_joined,                         -- vendors the previous point did not have
    vendors_left,                           -- vendors of the previous point not here
    vendor_set_change,                      -- 'joined: A, B; left: C' (null: the same vendors)
    coalesce(vendor_set_changed or gap_days > max_gap_days, true) as starts_segment,
    sum(case when vendor_set_changed or gap_days > max_gap_days then 1 else 0 end) over (
        partition by chart, gpu_family, series, calendar order by day rows unbounded preceding
    )::integer + 1 as segment               -- 1, 2, ...: the line's unbroken runs
from marked
order by chart, gpu_family, series, calendar, day
