-- The points of marts.card_history as its lines draw them, for a database whose card lines
-- name their record (the `source` column): one record per point, the line broken where
-- starts_segment. The calendars: the SQL of intermediate.int_source_calendars (the cadences).
with calendars as (
    {calendars}
)

select
    [h.gpu_model, h.vendor, h.source] as line,
    h.gpu_model as chart,
    h.day,
    [h.source] as records,
    c.max_gap_days,
    h.starts_segment,
    null::integer as vendors,
    false as marked
from marts.card_history as h
inner join calendars as c on h.source = c.source
order by line, h.day
