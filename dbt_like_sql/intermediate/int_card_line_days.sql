/* Card line days: the points of the price history per card (marts.card_history, a view of this
   table, adds where each line breaks and how the cards and lines rank): the daily close per
   GPU-hour (CNY) of each vendor's cheapest whole card (any GPU count), hourly on-demand, per
   card, vendor, record (source) and UTC day.
   Incremental by day: a point reads its own day only (since_day(): 0001-01-01 in a full build). */
-- grain: gpu_model, vendor, source, day
-- audit: price_positive: price is null or price <= 0
-- incremental: day
select
    observed_date as day,
    gpu_model,
    vendor,
    source,                 -- the record the line is read from: a spider, or '<archive>:<cloud>'
    min(close_price_cny_per_gpu_hour)::double as price,  -- CNY per GPU-hour: the cheapest close
    count(distinct offer_id)::integer as offers
from intermediate.int_offer_daily
where billing_period = 'hour' and offer_kind = 'on_demand' and gpu_fraction = 1
    and observed_date >= since_day()
group by observed_date, gpu_model, vendor, source
