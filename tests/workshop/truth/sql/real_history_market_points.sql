-- The points of marts.chart_points (the market lines: medians over vendors) as drawn, for a
-- database whose lines name their calendar: one calendar per point, the line broken where
-- starts_segment, a vendor-set change marked where vendor_set_changed.
-- The calendars: the SQL of intermediate.int_source_calendars (the cadences).
with calendars as (
    {calendars}
),

cadences as (
    select
        calendar,
        max(max_gap_days) as max_gap_days
    from calendars
    group by calendar
)

select
    [m.chart, m.gpu_family, m.series, m.calendar] as line,
    m.chart || ' ' || m.gpu_family as chart,
    m.day,
    [m.calendar] as records,
    c.max_gap_days,
    m.starts_segment,
    m.vendors,
    m.vendor_set_changed as marked
from marts.chart_points as m
inner join cadences as c on m.calendar = c.calendar
order by line, m.day
