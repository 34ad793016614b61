/* Chart points: the points of every price-history chart of the report, for every card family
   (the report draws those of pipelines/report/charts.py FAMILIES): per chart, card family, line,
   calendar and day, the median over vendors of each vendor's median daily close
   (intermediate.int_chart_line_days: the points, how they are computed). One line per calendar
   (intermediate.int_source_calendars: the live crawls, or one archive). A line breaks
   (`segment` grows) where two points are further apart than the calendar's cadence allows, and
   where the set of vendors behind the median changed: a median is drawn only over one vendor
   set, and the point where the set changes says so (vendor_set_change: who joined, who left).
   A view: a point's gap, vendor-set change and segment come from its line's earlier points and
   its calendar's cadence over every day, so a table would be rebuilt from the whole history
   every hour; the view reads the per-day points (lines x days, incremental) when a chart is
   drawn. Its prices are audited on that table: each audit of the view computes it again. */
-- grain: chart, gpu_family, series, calendar, day
-- audit: change_said: vendor_set_changed = (vendor_set_change is null)
-- audit: breaks_at_changes: (vendor_set_changed or gap_days > max_gap_days) and not starts_segment
-- materialized: view
with cadences as (
    select
        calendar,
        max(max_gap_days) as max_gap_days   -- one per calendar
    from intermediate.int_source_calendars
    group by calendar
),

points as (
    select
        p.*,
        c.max_gap_days,
        lag(p.day) over line as previous_day,
        lag(p.vendor_list) over line as previous_vendors
    from intermediate.int_chart_line_days as p
    inner join cadences as c on p.calendar = c.calendar
    window line as (partition by p.chart, p.gpu_family, p.series, p.calendar order by p.day)
),

-- the vendors of a point that its line's previous point did not have, and the other way round
-- (a line's first point changes no set)
set_changes as (
    select
        *,
        list_filter(vendor_list, lambda v: not list_contains(previous_vendors, v)) as joined,
        list_filter(previous_vendors, lambda v: not list_contains(vendor_list, v)) as left_vendors
    from points
),

marked as (
    select
        *,
        (day - previous_day)::integer as gap_days,
        coalesce(len(joined), 0)::integer as vendors_joined,
        coalesce(len(left_vendors), 0)::integer as vendors_left,
        case
            when len(joined) > 0 or len(left_vendors) > 0
                then concat_ws(
                    '; ',
                    case when len(joined) > 0 then 'joined: ' || array_to_string(joined, ', ') end,
                    case
                        when len(left_vendors) > 0
                            then 'left: ' || array_to_string(left_vendors, ', ')
                    end
                )
        end as vendor_set_change
    from set_changes
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
    vendor_set_change is not null as vendor_set_changed,  -- not the previous point's vendors
    vendors_joined,                         -- vendors the previous point did not have
    vendors_left,                           -- vendors of the previous point not here
    vendor_set_change,                      -- 'joined: A, B; left: C' (null: the same vendors)
    coalesce(vendor_set_change is not null or gap_days > max_gap_days, true) as starts_segment,
    sum(
        case when vendor_set_change is not null or gap_days > max_gap_days then 1 else 0 end
    ) over (
        partition by chart, gpu_family, series, calendar order by day rows unbounded preceding
    )::integer + 1 as segment               -- 1, 2, ...: the line's unbroken runs
from marked
order by chart, gpu_family, series, calendar, day
