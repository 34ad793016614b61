-- The price history of the cards listed by the most vendors (parameter 1: how many cards) and,
-- per card, its first lines (parameter 2: how many), from marts.card_history: one line per
-- vendor and record (source), with where it breaks (a gap longer than the source's cadence)
-- and whether the record is a public price archive (backfilled: `gpuprices backfill`), which
-- the chart draws as such.
select
    card_rank,
    gpu_model,
    line_rank,
    vendor,
    source,
    calendar,
    from_archive as backfilled,
    day,
    price,
    offers,
    gap_days,
    max_gap_days,
    starts_segment
from marts.card_history
where card_rank <= ?::integer and line_rank <= ?::integer
order by card_rank, line_rank, day
