-- The points of marts.card_history as its lines draw them, for a database whose card lines do
-- not name their record (one line per card and vendor, every point joined to the next): a
-- point's records are the sources whose cheapest offer that day is the price it draws.
-- The calendars: the SQL of intermediate.int_source_calendars (the cadences).
with calendars as (
    {calendars}
),

daily as (
    select
        d.observed_date as day,
        d.gpu_model,
        d.vendor,
        d.source,
        min(d.close_price_cny_per_gpu_hour)::double as price
    from intermediate.int_offer_daily as d
    where d.billing_period = 'hour' and d.offer_kind = 'on_demand' and d.gpu_fraction = 1
    group by d.observed_date, d.gpu_model, d.vendor, d.source
)

select
    [h.gpu_model, h.vendor] as line,
    h.gpu_model as chart,
    h.day,
    list(distinct d.source order by d.source) as records,
    max(c.max_gap_days) as max_gap_days,
    false as starts_segment,
    null::integer as vendors,
    false as marked
from marts.card_history as h
inner join daily as d
    on h.gpu_model = d.gpu_model and h.vendor = d.vendor and h.day = d.day and h.price = d.price
inner join calendars as c on d.source = c.source
group by h.gpu_model, h.vendor, h.day
order by line, h.day
