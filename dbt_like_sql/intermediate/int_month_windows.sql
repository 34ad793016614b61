/* The windows of a LOCAL month that the month-end signals compare, in one place (one row): the
   baseline is mid-month, clear of both month ends; the month end is where budgets run out; the
   next start is the first week of M+1 (the recovery); the start phase of marts.
   month_phase_stability is that first week from day 2 (day 1 is the recovery itself). Every
   month-end model (int_offer_month_depth, int_group_month_listings, int_source_month_reads,
   month_phase_stability, holiday_discount) reads its windows here, so they cannot drift apart.
   The `lookback` of the month-by-month models' headers must equal next_start_last_day
   (tests/sql/test_month_windows.py). Beside the windows, the evidence the month-end signals ask
   of them (the days a window needs for a month to be complete: dip and capacity alike) and the
   one-sided z their verdicts use, so no month-end model states them again. A constant: built
   once per version of this SQL. */
select
    8 as baseline_first_day,            -- baseline: from day 8 of the month ...
    22 as baseline_last_day,            -- ... to day 22
    5 as month_end_window_days,         -- month end: the last 5 days of the month
    2 as start_first_day,               -- start phase: from day 2 of the month ...
    7 as next_start_last_day,           -- ... to day 7; next start: days 1-7 of the next month
    -- a month is complete with enough days in each window: 5 of the 15 baseline days, 2 of the
    -- 5 month-end days, 2 of the 7 next-start days
    5 as min_baseline_days,
    2 as min_month_end_days,           -- month-end days a complete month needs
    2 as min_next_start_days,          -- next-start days a complete month needs
    1.645::double as z_one_sided        -- one-sided 5 %: the month-end verdicts' 90 % interval
