-- The price history of the cards listed by the most vendors (parameter 1: how many cards) and,
-- per card, its first vendors (parameter 2: how many lines), from marts.card_history.
select
    card_rank,
    gpu_model,
    line_rank,
    vendor,
    day,
    price,
    offers
from marts.card_history
where card_rank <= ?::integer and line_rank <= ?::integer
order by card_rank, line_rank, day
