-- Every series' offer-days, and the last day of each market's input (its days before it are
-- closed: a later day has begun, so no day still open is published).
select
    d.series_id,
    d.index_card,
    d.market,
    d.currency,
    d.offer_kind,
    d.term,
    d.index_date,
    d.offer_id,
    d.vendor,
    d.close_price_amount,
    d.close_price_per_gpu_hour,
    d.fresh,
    d.held,
    max(d.index_date) over (partition by d.market) as market_last_date
from intermediate.int_index_offer_days as d
order by d.series_id, d.index_date, d.offer_id
