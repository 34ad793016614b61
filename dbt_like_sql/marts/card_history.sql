/* Card history: the price history per card, the daily close per GPU-hour (CNY) of each
   vendor's cheapest whole card (any GPU count), hourly on-demand, for every card, vendor and
   record (source): one line per vendor AND record, so a vendor read from two archives, or from
   an archive and a live crawl, is two lines, never one line alternating between two tables that
   disagree. A line breaks where its points are further apart than its source's cadence allows
   (intermediate.int_source_calendars): `segment` counts from 1 and grows at each such gap, and
   the report draws no line between two segments. card_rank ranks the cards by how many vendors
   list them, line_rank a card's lines, those still listing it on the card's latest day first,
   by their latest price (the report draws the first few of each).
   A view of intermediate.int_card_line_days (the daily points, incremental): segments and ranks
   change with every new day, so a table would be rebuilt from the whole history every hour; the
   view reads the per-day points (cards x vendors x records x days) when a chart is drawn. Its
   prices are audited on that table: each audit of the view computes the view again. */
-- grain: gpu_model, vendor, source, day
-- audit: ranks_from_one: card_rank < 1 or line_rank < 1 or segment < 1
-- audit: breaks_at_gaps: gap_days > max_gap_days and not starts_segment
-- materialized: view
with daily as (
    select * from intermediate.int_card_line_days
),

spaced as (
    select
        d.*,
        c.calendar,
        c.from_archive,
        c.max_gap_days,
        (d.day - lag(d.day) over (
            partition by d.gpu_model, d.vendor, d.source order by d.day
        ))::integer as gap_days
    from daily as d
    inner join intermediate.int_source_calendars as c on d.source = c.source
),

segmented as (
    select
        *,
        coalesce(gap_days > max_gap_days, true) as starts_segment,
        sum(case when gap_days > max_gap_days then 1 else 0 end) over (
            partition by gpu_model, vendor, source order by day rows unbounded preceding
        )::integer + 1 as segment
    from spaced
),

cards as (
    select
        gpu_model,
        max(day) as latest_day,
        row_number() over (order by count(distinct vendor) desc, gpu_model) as card_rank
    from daily
    group by gpu_model
),

records as (
    select
        d.gpu_model,
        d.vendor,
        d.source,
        max(d.day) = any_value(c.latest_day) as listed_now,
        arg_max(d.price, d.day) as latest_price
    from daily as d
    inner join cards as c on d.gpu_model = c.gpu_model
    group by d.gpu_model, d.vendor, d.source
),

lines as (
    select
        gpu_model,
        vendor,
        source,
        row_number() over (
            partition by gpu_model
            order by listed_now desc, latest_price asc, vendor asc, source asc
        ) as line_rank
    from records
)

select
    c.card_rank,            -- 1 = the card the most vendors list (ties by gpu_model)
    s.gpu_model,
    l.line_rank,            -- 1 = the card's first line: listing it on its latest day, cheapest
    s.vendor,
    s.source,               -- the record the line is read from: a spider, or '<archive>:<cloud>'
    s.calendar,             -- 'crawl', or the archive the source belongs to
    s.from_archive,         -- read from a public price archive (gpuprices backfill)
    s.day,
    s.price,                -- CNY per GPU-hour: the vendor's cheapest daily close in this record
    s.offers,
    s.gap_days,             -- days since the line's previous point (null: its first)
    s.max_gap_days,         -- the longest gap its source's cadence allows: a longer one breaks it
    s.starts_segment,       -- no line is drawn from the previous point to this one
    s.segment               -- 1, 2, ...: the line's unbroken runs
from segmented as s
inner join cards as c on s.gpu_model = c.gpu_model
inner join lines as l on s.gpu_model = l.gpu_model and s.vendor = l.vendor and s.source = l.source
order by c.card_rank, l.line_rank, s.day
