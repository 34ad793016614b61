/* Each offer's last two days in the daily series: one row per offer, with its last day's close
   (`last_close`) and the close of the day before that one (`previous_close`; null: seen on one
   day only). What
   intermediate.int_price_changes compares an offer's rebuilt observations with (its last close
   before them), kept per offer so that no hourly update searches every offer-day for it.
   Incremental by merge: only the rebuilt days are read (since_day(), set by the model runner;
   every day in a full build); an offer seen on them gets its last day from them, and its
   previous day from them too when it was seen on two of them, else from its stored row: the
   stored last day when it is earlier (a new day), the stored previous day when it is the same
   day (the day rebuilt again). */
-- grain: offer_id
-- incremental: offer_id by merge
-- merge: previous_close = case when n.previous_close is not null then n.previous_close
--     when o.last_close.observed_date < n.last_close.observed_date then o.last_close
--     else o.previous_close end
with last_days as (
    select
        offer_id,
        {
            'observed_date': observed_date,
            'observed_at': last_observed_at,
            'price_amount': close_price_amount,
            'price_per_gpu_hour_cny': close_price_cny_per_gpu_hour,
            'available': close_available
        } as day_close,
        row_number() over (partition by offer_id order by observed_date desc) as days_back
    from intermediate.int_offer_daily
    where observed_date >= since_day()
    qualify days_back <= 2
)

select
    offer_id,
    any_value(day_close) filter (where days_back = 1)
        as last_close,          -- its last UTC day's date, last look, close as listed, CNY, stock
    any_value(day_close) filter (where days_back = 2)
        as previous_close       -- the same of the day before that one (null: seen on one day)
from last_days
group by offer_id
