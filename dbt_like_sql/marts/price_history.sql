/* The price history: one row per offer line (offer_id) and LOCAL day (the vendor's calendar, as in
   intermediate.int_offer_local_daily: Beijing time for Chinese vendors, UTC elsewhere), with the
   day's open, close, low and high price as listed (per billing_period, whole instance, in the
   listed currency) and per GPU-hour in CNY and USD, and the offer's descriptive columns. The
   series to chart or to feed a spreadsheet: `select * from marts.price_history where gpu_model =
   'A100-80GB' order by local_date`.
   Incremental like int_offer_local_daily: local days >= `since` (a UTC date) are rebuilt, from
   observations of `since` - 1 day on, since local day `since` in Beijing starts at 16:00 UTC of
   the day before (the partial local day since - 1 this reads is dropped by the runner). */
-- incremental: local_date
select
    offer_id,                                           -- one offer: vendor, place, card, terms
    local_date,                                         -- the vendor's calendar day
    any_value(local_time_zone) as local_time_zone,      -- 'Asia/Shanghai' or 'UTC'
    any_value(source) as source,                        -- the spider that read it
    any_value(vendor) as vendor,                        -- the vendor's name as shown
    any_value(gpu_model) as gpu_model,                  -- canonical card, e.g. A100-80GB
    any_value(region_code) as region_code,              -- the vendor's own region code
    any_value(country) as country,                      -- ISO 3166 country code
    any_value(offer_kind) as offer_kind,                -- on_demand, spot, reserved, ...
    any_value(billing_period) as billing_period,         -- what the listed price buys: hour, month
    any_value(gpu_count) as gpu_count,                  -- GPUs in the instance
    any_value(gpu_fraction) as gpu_fraction,            -- share of each GPU: 1, or a slice
    any_value(currency) as currency,                    -- the listed currency
    arg_min(price_amount, observed_at) as open_price_amount,    -- first listed amount of the day
    arg_max(price_amount, observed_at) as close_price_amount,   -- last listed amount of the day
    min(price_amount) as low_price_amount,              -- lowest listed amount of the day
    max(price_amount) as high_price_amount,             -- highest listed amount of the day
    arg_min(price_per_gpu_hour_cny, observed_at)
        as open_price_cny_per_gpu_hour,                 -- first of the day, CNY per GPU-hour
    arg_max(price_per_gpu_hour_cny, observed_at)
        as close_price_cny_per_gpu_hour,                -- last of the day, CNY per GPU-hour
    min(price_per_gpu_hour_cny) as low_price_cny_per_gpu_hour,  -- lowest, CNY per GPU-hour
    max(price_per_gpu_hour_cny) as high_price_cny_per_gpu_hour, -- highest, CNY per GPU-hour
    arg_min(price_per_gpu_hour_usd, observed_at)
        as open_price_usd_per_gpu_hour,                 -- first of the day, USD per GPU-hour
    arg_max(price_per_gpu_hour_usd, observed_at)
        as close_price_usd_per_gpu_hour,                -- last of the day, USD per GPU-hour
    min(price_per_gpu_hour_usd) as low_price_usd_per_gpu_hour,  -- lowest, USD per GPU-hour
    max(price_per_gpu_hour_usd) as high_price_usd_per_gpu_hour, -- highest, USD per GPU-hour
    arg_max_null(available, observed_at) as close_available,    -- stock at the last look
    min(observed_at) as first_observed_at,              -- the day's first look (UTC)
    max(observed_at) as last_observed_at,               -- the day's last look (UTC)
    count(*) as observations                            -- looks at the offer that day
from staging.stg_observations
-- observed_hour is stored: DuckDB skips older row groups by their min/max. Unset `since` (a full
-- build, a plain DuckDB shell) reads everything.
where
    observed_hour >= coalesce(
        (getvariable('since')::date - interval 1 day)::timestamptz,
        timestamptz '0001-01-01 00:00:00+00'
    )
group by offer_id, local_date
order by local_date, offer_id
