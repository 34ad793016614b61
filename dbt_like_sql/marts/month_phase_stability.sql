/* Month-phase stability: one row per offer and LOCAL month, how much the same offer's listed
   price moves from one local day to the next in each phase of the month: the start (days 2-7),
   mid-month (days 8-22) and the month end (its last 5 days), from the offer's own daily closes
   (intermediate.int_offer_local_daily: the vendor's calendar, the listed currency, so exchange
   rates cannot move it). A change is counted on the later of two consecutive local days; day 1's
   change (against the previous month's last day) belongs to no phase: it is the recovery from
   the previous month end. The statistic per phase is the MEAN absolute day-to-day change, % per
   day: a median of daily changes would hide a single step (most days do not change at all).
   The phases' days: the `params` CTE.
   Incremental by local month: a month's row reads the offer's days of that month only (day 1's
   change, the only one reaching back, is in no phase). Zones are UTC or east of it, so new
   observations fall in local months from the month of their first UTC day on; since_day() is
   that month's first day (0001-01-01 in a full build). Each day's change is taken against the
   offer's row of the day before by a join (issue 45, k21; before, a lag() window over every
   column of the month's offer-days): the same rows, the means equal to their last digits (a
   parallel sum's order). */
-- grain: offer_id, local_month
-- audit: changes_not_negative: least(start_mean_abs_change_pct, mid_mean_abs_change_pct) < 0
-- incremental: local_month by month
with params as (
    -- The phases of a local month, as the month-end signals window it (month_end_dip): the
    -- month end is its last 5 days, mid-month (days 8-22) is clear of both month ends, and the
    -- start is the rest of the first week from day 2 (day 1 is the recovery from the month end).
    -- Their days: intermediate.int_month_windows, the windows of every month-end model.
    select
        w.start_first_day,
        w.next_start_last_day as start_last_day,
        w.baseline_first_day as mid_first_day,
        w.baseline_last_day as mid_last_day,
        w.month_end_window_days
    from intermediate.int_month_windows as w
),

daily as (
    -- the offer's counted local days of the rebuilt months, with only the columns the month's
    -- row reads
    select
        offer_id,
        local_month,
        local_date,
        source,
        vendor,
        vendor_kind,
        offer_line,
        gpu_model,
        gpu_variant,
        region_code,
        region_group,
        offer_kind,
        billing_period,
        currency,
        close_price_amount
    from intermediate.int_offer_local_daily
    where local_date >= since_day()
        and counted  -- counted once: a non-direct twin of a direct offer is left out
        -- no curated table: its dates carry no calendar (int_sources_without_calendar)
        and source not in (select s.source from intermediate.int_sources_without_calendar as s)
),

changes as (
    -- each day beside the offer's day before (consecutive days only: a day after a gap has no
    -- change), joined on the day rather than a lag() window: the offer-days' grain makes the
    -- previous row of the window that day's row, and a join sorts nothing
    select
        d.*,
        100 * abs(d.close_price_amount - b.close_price_amount) / b.close_price_amount
            as abs_change_pct,
        case
            when day(d.local_date) between p.start_first_day and p.start_last_day then 'start'
            when day(d.local_date) between p.mid_first_day and p.mid_last_day then 'mid'
            when date_diff('day', d.local_date, last_day(d.local_date)) < p.month_end_window_days
                then 'month_end'
        end as month_phase
    from daily as d
    inner join daily as b
        on d.offer_id = b.offer_id
        and d.local_date - 1 = b.local_date
    cross join params as p
    where b.close_price_amount > 0
        and b.currency = d.currency
)

select
    local_month,                                        -- first day of the vendor's month
    offer_id,
    any_value(source) as source,
    any_value(vendor) as vendor,
    any_value(vendor_kind) as vendor_kind,
    any_value(offer_line) as offer_line,                -- the same vendor's same thing
    any_value(gpu_model) as gpu_model,
    split_part(any_value(gpu_model), '-', 1) as gpu_family,
    any_value(gpu_variant) as gpu_variant,              -- null: the listing did not say
    any_value(region_code) as region_code,
    any_value(region_group) as region_group,
    any_value(offer_kind) as offer_kind,
    any_value(billing_period) as billing_period,
    any_value(currency) as currency,                    -- the listed currency
    count(*) filter (where month_phase = 'start') as start_changes,   -- day pairs seen, days 2-7
    avg(abs_change_pct) filter (where month_phase = 'start')::double
        as start_mean_abs_change_pct,                   -- % per day, days 2-7
    count(*) filter (where month_phase = 'mid') as mid_changes,       -- day pairs seen, days 8-22
    avg(abs_change_pct) filter (where month_phase = 'mid')::double
        as mid_mean_abs_change_pct,                     -- % per day, days 8-22
    count(*) filter (where month_phase in ('start', 'mid'))
        as start_mid_changes,                           -- day pairs seen, days 2-22
    count(*) filter (where month_phase in ('start', 'mid') and abs_change_pct > 0)
        as start_mid_days_changed,                      -- ... on which the price moved
    avg(abs_change_pct) filter (where month_phase in ('start', 'mid'))::double
        as start_mid_mean_abs_change_pct,               -- % per day, days 2-22: the claim's value
    max(abs_change_pct) filter (where month_phase in ('start', 'mid'))::double
        as start_mid_max_abs_change_pct,                -- the largest single move, days 2-22
    count(*) filter (where month_phase = 'month_end')
        as month_end_changes,                           -- day pairs seen, last 5 days
    avg(abs_change_pct) filter (where month_phase = 'month_end')::double
        as month_end_mean_abs_change_pct                -- % per day, last 5 days: the comparison
from changes
where month_phase is not null
group by local_month, offer_id
