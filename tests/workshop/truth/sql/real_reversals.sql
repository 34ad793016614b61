-- Price moves of each offer between consecutive days of the calendar-dated archives, and whether
-- the move reversed: the close came back to the price before the move within 2 days of it (a
-- promotion, a mis-set price for a few hours). One row per move (`make truth-real`,
-- real_market.py).
with calendar_sources as (
    select distinct source
    from raw.crawls
    where calendar_signal
),

closes as (
    select
        split_part(d.source, ':', 1) as archive,
        d.offer_id,
        d.observed_date,
        d.close_price_amount as price,
        lag(d.close_price_amount) over w as previous_price,
        lead(d.close_price_amount, 1) over w as next_price,
        lead(d.observed_date, 1) over w as next_date,
        lead(d.close_price_amount, 2) over w as second_price,
        lead(d.observed_date, 2) over w as second_date
    from intermediate.int_offer_daily as d
    inner join calendar_sources as c on d.source = c.source
    window w as (partition by d.offer_id order by d.observed_date)
)

select
    archive,
    offer_id,
    observed_date,
    previous_price,
    price,
    coalesce(
        (next_price = previous_price and next_date - observed_date <= 2)
        or (second_price = previous_price and second_date - observed_date <= 2),
        false
    ) as reversed
from closes
where previous_price is not null and price <> previous_price
order by archive, offer_id, observed_date
