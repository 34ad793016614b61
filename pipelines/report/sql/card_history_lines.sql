-- The price history of the cards listed by the most vendors (parameter 1: how many cards) and,
-- per card, its first vendors (parameter 2: how many lines), from marts.card_history; with,
-- per point, whether the vendor's card was seen that day only through a public price archive
-- (backfilled: `gpuprices backfill`, reaches_via 'archive'), which the chart draws as such.
with archived as (
    select
        p.gpu_model,
        p.vendor,
        p.local_date as day,
        bool_and(p.reaches_via = 'archive') as backfilled
    from marts.price_history as p
    where
        p.billing_period = 'hour' and p.offer_kind = 'on_demand' and p.gpu_fraction = 1
    group by p.gpu_model, p.vendor, p.local_date
)

select
    h.card_rank,
    h.gpu_model,
    h.line_rank,
    h.vendor,
    h.day,
    h.price,
    h.offers,
    coalesce(a.backfilled, false) as backfilled
from marts.card_history as h
left join archived as a
    on h.gpu_model = a.gpu_model and h.vendor = a.vendor and h.day = a.day
where h.card_rank <= ?::integer and h.line_rank <= ?::integer
order by h.card_rank, h.line_rank, h.day
