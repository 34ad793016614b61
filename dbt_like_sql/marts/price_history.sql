/* The price history: one row per offer line (offer_id) and LOCAL day (the vendor's calendar, as in
   intermediate.int_offer_local_daily: Beijing time for Chinese vendors, UTC elsewhere), with the
   day's open, close, low and high price as listed (per billing_period, whole instance, in the
   listed currency) and per GPU-hour in CNY and USD, and the offer's descriptive columns. The
   series to chart or to feed a spreadsheet: `select * from marts.price_history where gpu_model =
   'A100-80GB' order by local_date`.
   A view of intermediate.int_offer_local_daily, which aggregates each offer's local day once
   for this and the month-end signals: always as current as the intermediate, and the history is
   stored once, not twice (at a year it is the largest table; a copy made every published file
   bigger and every publish slower). */
-- grain: offer_id, local_date
-- audit: low_below_high: low_price_amount > high_price_amount
-- audit: has_observations: observations < 1
-- materialized: view
select
    offer_id,                                           -- one offer: vendor, place, card, terms
    local_date,                                         -- the vendor's calendar day
    local_time_zone,                                    -- 'Asia/Shanghai' or 'UTC'
    source,                                             -- the spider that read it
    vendor,                                             -- the vendor's name as shown
    gpu_model,                                          -- canonical card, e.g. A100-80GB
    region_code,                                        -- the vendor's own region code
    country,                                            -- ISO 3166 country code
    offer_kind,                                         -- on_demand, spot, reserved, ...
    billing_period,                                     -- what the listed price buys: hour, month
    gpu_count,                                          -- GPUs in the instance
    gpu_fraction,                                       -- share of each GPU: 1, or a slice
    currency,                                           -- the listed currency
    open_price_amount,                                  -- first listed amount of the day
    close_price_amount,                                 -- last listed amount of the day
    low_price_amount,                                   -- lowest listed amount of the day
    high_price_amount,                                  -- highest listed amount of the day
    open_price_cny_per_gpu_hour,                        -- first of the day, CNY per GPU-hour
    close_price_cny_per_gpu_hour,                       -- last of the day, CNY per GPU-hour
    low_price_cny_per_gpu_hour,                         -- lowest, CNY per GPU-hour
    high_price_cny_per_gpu_hour,                        -- highest, CNY per GPU-hour
    open_price_usd_per_gpu_hour,                        -- first of the day, USD per GPU-hour
    close_price_usd_per_gpu_hour,                       -- last of the day, USD per GPU-hour
    low_price_usd_per_gpu_hour,                         -- lowest, USD per GPU-hour
    high_price_usd_per_gpu_hour,                        -- highest, USD per GPU-hour
    close_available,                                    -- stock at the last look
    first_observed_at,                                  -- the day's first look (UTC)
    last_observed_at,                                   -- the day's last look (UTC)
    observations,                                       -- looks at the offer that day
    reaches_via,                                        -- direct, or aggregator | second_path
    counted                                             -- false: its direct twin counts
from intermediate.int_offer_local_daily
where local_date >= since_day()
order by local_date, offer_id
