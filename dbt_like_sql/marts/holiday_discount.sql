/* Holiday discount: one row per offer of a Chinese vendor (local calendar Asia/Shanghai) and
   Chinese public holiday the history covers: the offer's median daily close ON the statutory
   holiday days against its own median close over a baseline of local days 21 to 8 before the
   holiday, as listed (listed currency: exchange rates cannot move it). Baseline days in the last
   5 days of a month or on another holiday are left out, so a month-end dip is not read as the
   normal price (New Year, Labour Day and National Day start right after a month end; a month-end
   dip that lasts into the holiday would still read as a holiday discount, see
   docs/market-claims.md). An offer needs 3+ baseline days and 1+ holiday day.
   Holiday dates: the statutory days of the State Council's 全国年节及纪念日放假办法 (as amended
   2024-11-10, in force 2025-01-01: New Year 1 day, Spring Festival 4 days from New Year's Eve,
   Qingming 1, Labour Day 2, Dragon Boat 1, Mid-Autumn 1, National Day 3), lunar and solar-term
   dates from the Chinese calendar. The longer bridged breaks (调休) the State Council General
   Office announces each year are not listed: the statutory days fall inside them. The windows
   and minimums: the `params` CTE.
   Incremental by holiday: a holiday's rows read local days up to its last day only, and new
   observations fall on local days from their first UTC day (`since`) on (zones are UTC or east
   of it), so only the holidays ending on or after since_day() are rebuilt (0001-01-01 in a
   full build: every holiday). Those holidays read the local days from since_day() - 24 on
   (their 21 baseline days before a first day at most 3 days before since_day()), not every
   offer-day. */
-- grain: offer_id, holiday, holiday_first_day
-- audit: prices_positive: least(baseline_price_amount, holiday_price_amount) <= 0
-- audit: days_in_order: holiday_last_day < holiday_first_day
-- incremental: holiday_last_day
with params as (
    select
        -- The baseline: local days 21 to 8 before the holiday's first day, two weeks of ordinary
        -- closes that end a week before the holiday (kept clear of its run-up).
        21 as baseline_first_days_before,
        8 as baseline_last_days_before,
        -- Baseline days in the last 5 days of a month are left out: the month-end window of the
        -- month-end signals (intermediate.int_month_windows), so a month-end dip is not read as
        -- the normal price.
        w.month_end_window_days,
        -- An offer is compared with 3+ baseline days (a median of at least three closes) and at
        -- least one holiday day.
        3 as min_baseline_days,
        1 as min_holiday_days
    from intermediate.int_month_windows as w
),

holidays as (
    select h.holiday, h.first_day::date as first_day, h.last_day::date as last_day
    from (
        values
        ('New Year 元旦', '2025-01-01', '2025-01-01'),
        ('Spring Festival 春节', '2025-01-28', '2025-01-31'),
        ('Qingming 清明', '2025-04-04', '2025-04-04'),
        ('Labour Day 劳动节', '2025-05-01', '2025-05-02'),
        ('Dragon Boat 端午', '2025-05-31', '2025-05-31'),
        ('National Day 国庆节', '2025-10-01', '2025-10-03'),
        ('Mid-Autumn 中秋', '2025-10-06', '2025-10-06'),
        ('New Year 元旦', '2026-01-01', '2026-01-01'),
        ('Spring Festival 春节', '2026-02-16', '2026-02-19'),
        ('Qingming 清明', '2026-04-05', '2026-04-05'),
        ('Labour Day 劳动节', '2026-05-01', '2026-05-02'),
        ('Dragon Boat 端午', '2026-06-19', '2026-06-19'),
        ('Mid-Autumn 中秋', '2026-09-25', '2026-09-25'),
        ('National Day 国庆节', '2026-10-01', '2026-10-03'),
        ('New Year 元旦', '2027-01-01', '2027-01-01'),
        ('Spring Festival 春节', '2027-02-05', '2027-02-08'),
        ('Qingming 清明', '2027-04-05', '2027-04-05'),
        ('Labour Day 劳动节', '2027-05-01', '2027-05-02'),
        ('Dragon Boat 端午', '2027-06-09', '2027-06-09'),
        ('Mid-Autumn 中秋', '2027-09-15', '2027-09-15'),
        ('National Day 国庆节', '2027-10-01', '2027-10-03')
    ) as h (holiday, first_day, last_day)
),

rebuilt_holidays as (
    select *
    from holidays
    where last_day >= since_day()
),

holiday_days as (
    select unnest(generate_series(first_day, last_day, interval 1 day))::date as local_date
    from holidays
),

windowed as (
    select
        h.holiday,
        h.first_day,
        h.last_day,
        d.*,
        d.local_date between h.first_day and h.last_day as on_holiday
    from intermediate.int_offer_local_daily as d
    cross join params as p
    inner join rebuilt_holidays as h
        on d.local_date between h.first_day - p.baseline_first_days_before and h.last_day
    where d.local_time_zone = 'Asia/Shanghai'
        and d.counted  -- counted once (staging.stg_observations)
        -- the rebuilt holidays' days only, before the range join
        and d.local_date >= (select min(r.first_day) from rebuilt_holidays as r)
        - p.baseline_first_days_before
        -- the same bound as a constant the scan skips row groups by (a subquery is not pushed
        -- into it): a rebuilt holiday ends on or after since_day(), so it starts at most 3 days
        -- before it (the longest, Spring Festival, is 4 days) and its baseline at most
        -- baseline_first_days_before (21) days before that
        and d.local_date >= since_day() - 24
        and (
            d.local_date between h.first_day and h.last_day
            or (
                d.local_date <= h.first_day - p.baseline_last_days_before
                and date_diff('day', d.local_date, last_day(d.local_date))
                >= p.month_end_window_days
                and d.local_date not in (select hd.local_date from holiday_days as hd)
            )
        )
),

priced as (
    select
        holiday,
        first_day,
        last_day,
        offer_id,
        any_value(source) as source,
        any_value(vendor) as vendor,
        any_value(vendor_kind) as vendor_kind,
        any_value(offer_line) as offer_line,
        any_value(gpu_model) as gpu_model,
        any_value(gpu_variant) as gpu_variant,
        any_value(region_code) as region_code,
        any_value(region_group) as region_group,
        any_value(offer_kind) as offer_kind,
        any_value(billing_period) as billing_period,
        -- one currency: the least equals the greatest (a distinct count made DuckDB aggregate
        -- the rows twice and join the halves)
        min(currency) as least_currency,
        max(currency) as greatest_currency,
        any_value(currency) as currency,
        count(*) filter (where not on_holiday) as baseline_days,
        count(*) filter (where on_holiday) as holiday_days_seen,
        median(close_price_amount) filter (where not on_holiday) as baseline_amount,
        median(close_price_amount) filter (where on_holiday) as holiday_amount
    from windowed
    group by holiday, first_day, last_day, offer_id
)

select
    holiday,                                            -- e.g. 'National Day 国庆节'
    first_day as holiday_first_day,                     -- first statutory day (local)
    last_day as holiday_last_day,                       -- last statutory day
    offer_id,
    source,
    vendor,
    vendor_kind,
    offer_line,                                         -- the same vendor's same thing
    gpu_model,
    split_part(gpu_model, '-', 1) as gpu_family,
    gpu_variant,                                        -- null: the listing did not say
    region_code,
    region_group,
    offer_kind,
    billing_period,
    currency,                                           -- the listed currency
    baseline_days,                                      -- local days 21-8 before, seen
    holiday_days_seen,                                  -- statutory days seen
    baseline_amount::decimal(18, 6)
        as baseline_price_amount,                       -- median daily close, as listed
    holiday_amount::decimal(18, 6)
        as holiday_price_amount,                        -- median daily close on the holiday
    (100 * (1 - holiday_amount / baseline_amount))::double
        as holiday_discount_pct                         -- positive: cheaper on the holiday
from priced
where baseline_days >= (select p.min_baseline_days from params as p)
    and holiday_days_seen >= (select p.min_holiday_days from params as p)
    and baseline_amount > 0 and least_currency = greatest_currency
