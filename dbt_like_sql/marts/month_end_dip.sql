/* End-of-month dip: one row per source, vendor, card, region, offer kind and month (hourly billing
   only): the month-end price and available capacity against the mid-month baseline, and the
   group's dip strength and confidence over all its complete months.
   Windows: baseline = days 8-22 of the month, month end = its last 5 days; a month is complete
   when both windows have data. Thresholds: a complete month dipped when dip_pct >= 3 or
   availability_change_pct >= 20 (or available offers appear where the baseline had none); the
   group signals a dip when months_observed >= 2, confidence >= 0.6 and strength_pct >= 3. */
with daily as (
    select
        observed_month as month,
        observed_date,
        source,
        vendor,
        gpu_model,
        region_code,
        offer_kind,
        any_value(region_group) as region_group,
        median(close_price_cny_per_gpu_hour) as price_cny_per_gpu_hour,   -- over the day's offers
        count(*) filter (where available) as available_offers
    from intermediate.int_offer_daily
    where billing_period = 'hour'
    group by observed_month, observed_date, source, vendor, gpu_model, region_code, offer_kind
),

windowed as (
    select
        *,
        case
            when day(observed_date) between 8 and 22 then 'baseline'
            when date_diff('day', observed_date, last_day(observed_date)) < 5 then 'month_end'
        end as month_window
    from daily
),

monthly as (
    select
        month,
        source,
        vendor,
        gpu_model,
        region_code,
        offer_kind,
        any_value(region_group) as region_group,
        median(price_cny_per_gpu_hour) filter (where month_window = 'baseline')
            as baseline_price_cny_per_gpu_hour,
        median(price_cny_per_gpu_hour) filter (where month_window = 'month_end')
            as month_end_price_cny_per_gpu_hour,
        avg(available_offers) filter (where month_window = 'baseline')
            as baseline_available_offers,
        avg(available_offers) filter (where month_window = 'month_end')
            as month_end_available_offers
    from windowed
    group by month, source, vendor, gpu_model, region_code, offer_kind
),

scored as (
    select
        *,
        100 * (baseline_price_cny_per_gpu_hour - month_end_price_cny_per_gpu_hour)
            / nullif(baseline_price_cny_per_gpu_hour, 0) as dip_pct,
        100 * (month_end_available_offers - baseline_available_offers)
            / nullif(baseline_available_offers, 0) as availability_change_pct,
        baseline_price_cny_per_gpu_hour is not null
            and month_end_price_cny_per_gpu_hour is not null as complete
    from monthly
),

flagged as (
    select
        *,
        case
            when complete then coalesce(dip_pct >= 3, false)
                or coalesce(availability_change_pct >= 20, false)
                or (baseline_available_offers = 0 and month_end_available_offers > 0)
        end as dipped
    from scored
),

grouped as (
    select
        *,
        count(case when complete then 1 end) over offer_group as months_observed,
        count(case when dipped then 1 end) over offer_group as months_dipped,
        avg(case when complete then dip_pct end) over offer_group as strength_pct
    from flagged
    window offer_group as (partition by source, vendor, gpu_model, region_code, offer_kind)
)

select
    month,                                              -- first day of the month
    source,
    vendor,
    gpu_model,
    region_code,
    region_group,
    offer_kind,
    baseline_price_cny_per_gpu_hour::decimal(18, 6)
        as baseline_price_cny_per_gpu_hour,             -- median daily close, days 8-22
    month_end_price_cny_per_gpu_hour::decimal(18, 6)
        as month_end_price_cny_per_gpu_hour,            -- median daily close, last 5 days
    dip_pct::double as dip_pct,                         -- positive = cheaper at month end
    baseline_available_offers::double as baseline_available_offers,     -- mean daily count
    month_end_available_offers::double as month_end_available_offers,   -- mean daily count
    availability_change_pct::double as availability_change_pct,
    dipped,                                             -- null: month not complete
    months_observed,                                    -- the group's complete months
    months_dipped,
    strength_pct::double as strength_pct,               -- mean dip_pct over complete months
    (months_dipped / nullif(months_observed, 0))::double as confidence,
    coalesce(months_observed >= 2
             and months_dipped / nullif(months_observed, 0) >= 0.6
             and strength_pct >= 3, false) as dip_signal
from grouped
order by source, vendor, gpu_model, region_code, offer_kind, month
