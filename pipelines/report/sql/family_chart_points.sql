-- The points of the price-history charts of the card families drawn (parameter: a list), from
-- marts.chart_points: one line per series and calendar, broken where it starts a segment (a gap
-- longer than the calendar's cadence, or another set of vendors).
select
    chart,
    gpu_family,
    series,
    calendar,
    day,
    price,
    offers,
    vendors,
    gap_days,
    max_gap_days,
    vendor_set_change,
    starts_segment
from marts.chart_points
where list_contains(?::varchar[], gpu_family)
order by chart, gpu_family, series, calendar, day
