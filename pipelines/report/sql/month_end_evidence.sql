-- Why the month-end table can be empty, with counts (pipelines/report/signals.py): the hourly
-- offers left out because their source is a curated table with no calendar (its dates are edit
-- dates: intermediate.int_sources_without_calendar), the offer-months of the other sources, how
-- many are complete, how many lack each window's days, and the windows themselves
-- (intermediate.int_month_windows).
with calendarless as (
    select
        count(distinct d.offer_id) as calendarless_offers,
        count(distinct d.source) as calendarless_sources
    from intermediate.int_offer_daily as d
    inner join intermediate.int_sources_without_calendar as s on d.source = s.source
    where d.billing_period = 'hour'
),

months as (
    select
        count(*) as offer_months,
        count(*) filter (where m.complete) as complete_months,
        count(*) filter (where m.baseline_days < w.min_baseline_days) as short_baseline,
        count(*) filter (where m.month_end_days < w.min_month_end_days) as short_month_end,
        count(*) filter (where m.next_start_days < w.min_next_start_days) as short_next_start
    from intermediate.int_offer_month_depth as m
    cross join intermediate.int_month_windows as w
)

select
    c.calendarless_offers,
    c.calendarless_sources,
    m.offer_months,
    m.complete_months,
    m.short_baseline,
    m.short_month_end,
    m.short_next_start,
    w.*  -- the windows and the days each needs
from calendarless as c
cross join months as m
cross join intermediate.int_month_windows as w
