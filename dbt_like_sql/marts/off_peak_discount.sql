/* Off-peak (night) discount: one row per hourly-billed offer and LOCAL day on which the offer was
   seen both at night and by day: its night price against its own daytime price that same day.
   Night = local 00:00-06:59, day = local 07:00-23:59, on the vendor's calendar (Beijing time for
   Chinese vendors, UTC elsewhere; `local_time_zone` of staging). Prices as listed (per hour, in
   the listed currency), so an exchange-rate move cannot read as a night discount; CNY beside it.
   Each side is the median of that side's looks, so one odd look does not make a discount. Needs
   crawls at night and by day (hourly schedules give both); a day seen on one side has no row.
   Incremental by local_date: local day `since` in Beijing starts at 16:00 UTC of the day before,
   so observations are read from since_local_hour() on (14 hours before `since`: UTC+14, the
   easternmost offset, as in intermediate.int_offer_local_daily), and only the local days from
   `since` are aggregated.
   Where night ends: the `params` CTE. */
-- grain: offer_id, local_date
-- audit: both_sides_seen: night_looks < 1 or day_looks < 1
-- incremental: local_date
with params as (
    -- Night = local hours before 07:00 (00:00-06:59): the hours a working day does not use, when
    -- a vendor would fill idle cards; day = 07:00-23:59.
    select 7 as night_end_hour
),

looks as (
    select
        *,
        hour(timezone(local_time_zone, observed_at))
        < (select p.night_end_hour from params as p) as at_night   -- local 00:00-06:59
    from staging.stg_observations
    where billing_period = 'hour'
        and counted  -- counted once: a non-direct twin of a direct offer is left out
        and observed_hour >= since_local_hour()
        -- only the local days rebuilt: a day east of UTC starts on the UTC day before, whose
        -- other hours fall in a local day the runner would not keep
        and local_date >= since_day()
        -- no curated table: its hours carry no calendar (int_sources_without_calendar)
        and source not in (select s.source from intermediate.int_sources_without_calendar as s)
),

sides as (
    select
        offer_id,
        local_date,
        any_value(local_time_zone) as local_time_zone,
        any_value(source) as source,
        any_value(vendor) as vendor,
        any_value(vendor_kind) as vendor_kind,
        any_value(offer_line) as offer_line,
        any_value(gpu_model) as gpu_model,
        any_value(gpu_family) as gpu_family,
        any_value(gpu_variant) as gpu_variant,
        any_value(region_code) as region_code,
        any_value(region_group) as region_group,
        any_value(offer_kind) as offer_kind,
        any_value(currency) as currency,
        count(*) filter (where at_night) as night_looks,
        count(*) filter (where not at_night) as day_looks,
        median(price_amount) filter (where at_night) as night_price_amount,
        median(price_amount) filter (where not at_night) as day_price_amount,
        median(instance_price_cny_per_hour) filter (where at_night) as night_price_cny,
        median(instance_price_cny_per_hour) filter (where not at_night) as day_price_cny
    from looks
    group by offer_id, local_date
)

select
    local_date,                                         -- the vendor's calendar day
    local_time_zone,                                    -- 'Asia/Shanghai' or 'UTC'
    offer_id,
    source,
    vendor,
    vendor_kind,
    offer_line,                                         -- the same vendor's same thing
    gpu_model,
    gpu_family,
    gpu_variant,                                        -- null: the listing did not say
    region_code,
    region_group,
    offer_kind,
    currency,                                           -- the listed currency
    night_looks,                                        -- observations at local 00:00-06:59
    day_looks,                                          -- observations at local 07:00-23:59
    night_price_amount::decimal(18, 6)
        as night_price_amount,                          -- median listed hourly price at night
    day_price_amount::decimal(18, 6)
        as day_price_amount,                            -- median listed hourly price by day
    night_price_cny::decimal(18, 6)
        as night_price_cny_per_hour,                    -- the same in CNY, for reading
    day_price_cny::decimal(18, 6) as day_price_cny_per_hour,
    (night_price_amount / day_price_amount)::double
        as night_to_day_ratio,                          -- 1.0: the same price day and night
    (100 * (1 - night_price_amount / day_price_amount))::double
        as night_discount_pct                           -- positive: cheaper at night
from sides
where night_looks > 0 and day_looks > 0 and day_price_amount > 0
