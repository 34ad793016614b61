-- The points of marts.chart_points (the market lines: medians over vendors) as drawn, for a
-- database whose lines do not name their calendar (one line per chart, family and series, every
-- point joined to the next, nothing marked): a point's records are the calendars (live crawls,
-- or an archive) with hourly offers of the family that day, an upper bound of the ones in its
-- series. The calendars: the SQL of intermediate.int_source_calendars (the cadences).
with calendars as (
    {calendars}
),

present as (
    select
        d.gpu_family,
        d.observed_date as day,
        list(distinct c.calendar order by c.calendar) as records,
        max(c.max_gap_days) as max_gap_days
    from intermediate.int_offer_daily as d
    inner join calendars as c on d.source = c.source
    where d.billing_period = 'hour'
    group by d.gpu_family, d.observed_date
)

select
    [m.chart, m.gpu_family, m.series] as line,
    m.chart || ' ' || m.gpu_family as chart,
    m.day,
    p.records,
    p.max_gap_days,
    false as starts_segment,
    m.vendors,
    false as marked
from marts.chart_points as m
inner join present as p on m.gpu_family = p.gpu_family and m.day = p.day
order by line, m.day
