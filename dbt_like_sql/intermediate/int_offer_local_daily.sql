/* One row per offer and LOCAL day: the day on the vendor's own calendar (`local_date` of
   staging.stg_observations: Beijing time for Chinese vendors, UTC elsewhere), so a Beijing
   vendor's month-end price cut that starts at local 00:00 (16:00 UTC the day before) falls on
   the right day and month. The day's closing price as listed (exchange rates cannot move it),
   the same close in CNY per GPU-hour beside it, and whether the offer was listed and in stock.
   The daily series the month-end signals (month_end_dip, month_end_capacity) follow; with the
   day's open, low and high beside the close, the series marts.price_history publishes.
   Incremental: the runner deletes and re-inserts local days >= `since` (a UTC date). Zones are
   UTC or east of it, so every new observation falls on a local day >= since; but local day
   `since` in Beijing starts at 16:00 UTC of the day before, so observations are read from
   since_local_hour() on, 14 hours before `since` (UTC+14, the easternmost offset of the time
   zone database, starts its day then; the partial local day since - 1 this yields is dropped
   by the runner, whose filter DuckDB applies below the aggregate). Not the whole UTC day
   before: a fourth less to scan.
   Folded as intermediate.int_offer_daily is (its header says how): an hourly update reads the
   looks since the first new hour, not 14-38 hours of every offer's. */
-- incremental: local_date
-- fold: offer_id, local_date when n.first_observed_at > o.last_observed_at
-- merge: counted = n.counted and o.counted
-- merge: open_price_amount = coalesce(o.open_price_amount, n.open_price_amount)
-- merge: close_price_amount = coalesce(n.close_price_amount, o.close_price_amount)
-- merge: low_price_amount least
-- merge: high_price_amount greatest
-- merge: open_price_cny_per_gpu_hour = coalesce(o.open_price_cny_per_gpu_hour,
--    n.open_price_cny_per_gpu_hour)
-- merge: close_price_cny_per_gpu_hour = coalesce(n.close_price_cny_per_gpu_hour,
--    o.close_price_cny_per_gpu_hour)
-- merge: low_price_cny_per_gpu_hour least
-- merge: high_price_cny_per_gpu_hour greatest
-- merge: open_price_usd_per_gpu_hour = coalesce(o.open_price_usd_per_gpu_hour,
--    n.open_price_usd_per_gpu_hour)
-- merge: close_price_usd_per_gpu_hour = coalesce(n.close_price_usd_per_gpu_hour,
--    o.close_price_usd_per_gpu_hour)
-- merge: low_price_usd_per_gpu_hour least
-- merge: high_price_usd_per_gpu_hour greatest
-- merge: available = n.available or o.available
-- merge: first_observed_at least
-- merge: last_observed_at greatest
-- merge: observations = n.observations + o.observations
with refolded as (
    select r.offer_id from refolded_offers(since_local_hour()) as r
),

looks as (
    -- the looks since the first new hour of the offers folded (every look of the days
    -- read in a rebuild from a day or a full build: nothing is refolded then) ...
    select s.*
    from staging.stg_observations as s
    anti join refolded as r on s.offer_id = r.offer_id
    where
        s.observed_hour >= since_local_hour()
        and s.observed_hour >= fold_hour()
    union all
    -- ... and the whole rebuilt local days of the others
    select s.*
    from staging.stg_observations as s
    semi join refolded as r on s.offer_id = r.offer_id
    where folding() and s.observed_hour >= since_local_hour()
)

select
    offer_id,
    local_date,                                         -- the vendor's calendar day
    any_value(local_month) as local_month,              -- first day of the local month
    any_value(local_time_zone) as local_time_zone,      -- 'Asia/Shanghai' or 'UTC'
    any_value(source) as source,
    any_value(vendor) as vendor,
    any_value(vendor_kind) as vendor_kind,
    any_value(reaches_via) as reaches_via,              -- direct | aggregator | ...
    bool_and(counted) as counted,                       -- counted once (stg_observations)
    any_value(gpu_model) as gpu_model,
    any_value(gpu_variant) as gpu_variant,              -- null: the listing did not say
    any_value(region_code) as region_code,
    any_value(country) as country,
    any_value(region_group) as region_group,            -- province in China, else country
    any_value(offer_kind) as offer_kind,
    any_value(billing_period) as billing_period,
    any_value(gpu_count) as gpu_count,
    any_value(gpu_fraction) as gpu_fraction,
    any_value(offer_line) as offer_line,                -- the same vendor's same thing
    any_value(currency) as currency,                    -- the listed currency
    arg_min(price_amount, observed_at) as open_price_amount,    -- first listed amount of the day
    arg_max(price_amount, observed_at) as close_price_amount,   -- last listed amount of the day
    min(price_amount) as low_price_amount,              -- lowest listed amount of the day
    max(price_amount) as high_price_amount,             -- highest listed amount of the day
    arg_min(price_per_gpu_hour_cny, observed_at)
        as open_price_cny_per_gpu_hour,                 -- first of the day, CNY per GPU-hour
    arg_max(price_per_gpu_hour_cny, observed_at)
        as close_price_cny_per_gpu_hour,                -- the same close in CNY, for reading
    min(price_per_gpu_hour_cny) as low_price_cny_per_gpu_hour,  -- lowest, CNY per GPU-hour
    max(price_per_gpu_hour_cny) as high_price_cny_per_gpu_hour, -- highest, CNY per GPU-hour
    arg_min(price_per_gpu_hour_usd, observed_at)
        as open_price_usd_per_gpu_hour,                 -- first of the day, USD per GPU-hour
    arg_max(price_per_gpu_hour_usd, observed_at)
        as close_price_usd_per_gpu_hour,                -- last of the day, USD per GPU-hour
    min(price_per_gpu_hour_usd) as low_price_usd_per_gpu_hour,  -- lowest, USD per GPU-hour
    max(price_per_gpu_hour_usd) as high_price_usd_per_gpu_hour, -- highest, USD per GPU-hour
    bool_or(coalesce(available, true)) as available,   -- in stock at some look (unknown = yes)
    arg_max_null(available, observed_at) as close_available,    -- stock at the last look
    min(observed_at) as first_observed_at,              -- the day's first look (UTC)
    max(observed_at) as last_observed_at,               -- the day's last look (UTC)
    count(*) as observations                            -- looks at the offer that day
-- observed_hour is stored: DuckDB skips older row groups by their min/max. Unset `since` (a full
-- build, a plain DuckDB shell) reads everything.
from looks
group by offer_id, local_date
-- stored in day order (a full build too; incremental builds append days), so that the models
-- reading only the rebuilt local days or months skip the older row groups
order by local_date, offer_id
