/* Regional line window: one row per vendor, offer line, configuration, region group and UTC day on
   which the line is paired (intermediate.int_regional_pairs has both sides that day), over the
   line's paired days of two trailing windows. window_ratio is the median of its daily region /
   reference ratios over the last 14 days (the day itself and the 13 before): a list price wanders
   around its level and is revised every few days to weeks, so one day's ratio carries both sides'
   wander, and the median narrows that where prices are revised within the window, at the cost of
   at most a week (half the window) of lag when a vendor really re-prices a region. wander_pp is
   half the range of the daily ratios over the last 28 days, in percentage points: how far the
   line's ratio has been seen to move (a vendor's own dips, trends and currency moves hit both
   sides alike and cancel in the ratio). A line paired on one day only (a new install) has windows
   of that day: window_days = 1, wander_pp = 0. Incremental by day: a row reads its own day and the
   27 before, never a later one, so an incremental build rebuilds the days from since_day() on and
   reads 27 days more (a full build: every day). */
-- incremental: observed_date
with settings as (
    select since_day() as since
),

paired as (
    select p.*
    from intermediate.int_regional_pairs as p
    cross join settings as s
    where p.price_ratio is not null
        and p.observed_date >= s.since - 27                  -- the wander's window, below
),

windowed as (
    select
        p.*,
        s.since,
        median(p.price_ratio) over ratio_window as window_ratio,
        count(*) over ratio_window as window_days,
        (max(p.price_ratio) over wander_window - min(p.price_ratio) over wander_window)
            as wander_range
    from paired as p
    cross join settings as s
    window
        line as (
            partition by p.vendor, p.offer_line, p.machine_config, p.country, p.region_group
            order by p.observed_date
        ),
        -- the median's window: the day and the 13 before
        ratio_window as (line range between interval 13 days preceding and current row),
        -- the wander's window: the day and the 27 before
        wander_window as (line range between interval 27 days preceding and current row)
)

select
    observed_date,
    vendor,
    offer_line,
    machine_config,                                     -- as in int_regional_pairs
    gpu_model,
    gpu_fraction,
    offer_kind,
    billing_period,
    country,
    region_group,
    reference,
    price_ratio,                                        -- the day's own ratio
    window_ratio,                                       -- median over the 14-day window
    window_days,                                        -- paired days in it (1 to 14)
    (100 * wander_range / 2)::double as wander_pp       -- half the 28-day range of the ratio
from windowed
where observed_date >= since
