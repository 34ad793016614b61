/* The market a day's prices are judged by (docs/data-quality.md, "Outliers across vendors"): one
   row per UTC day with observations, card, offer kind and billing period. The market is that of
   marts.price_outliers, taken on each day instead of today: the counted offers seen in the
   `market_days` days up to that day (the day itself and the market_days - 1 before), each at its
   last daily close up to that day; each vendor's median of log price per GPU-hour, then the
   median over vendors, and the MAD, the median distance of the vendors' medians from it. The
   limit is `mads_allowed` x max(MAD, `min_mad`) in log price; fewer than `min_vendors` vendors:
   null (not judged). marts.held_observations judges each observation against its own day's row,
   so a verdict does not move when a later day's market does. Incremental by day: a row reads its
   own day and the market_days - 1 before, never a later one (a full build: every day); of the
   days before the first rebuilt, only each offer's last close is sorted with the new ones. */
-- incremental: market_date
-- grain: market_date, gpu_model, offer_kind, billing_period
with params as (   -- the rules, in their one home
    select * from intermediate.int_outlier_rules
),

settings as (
    select
        since_day() as since,                           -- the first market day rebuilt
        since_day() - (p.market_days - 1) as first_day  -- the first close its market reads
    from params as p
),

last_before as (
    -- each offer's last close before the first day rebuilt, within the market's reach: of the
    -- closes before that day only this one can stand on a rebuilt day (an earlier one's next
    -- close comes before it), so the window below sorts two days of closes, not market_days
    select
        d.offer_id,
        max(d.observed_date) as observed_date
    from intermediate.int_offer_daily as d
    cross join settings as s
    where d.observed_date >= s.first_day and d.observed_date < s.since
    group by d.offer_id
),

standing as (
    -- the closes that can stand on a rebuilt day: those of the rebuilt days and the last before
    select d.*
    from intermediate.int_offer_daily as d
    cross join settings as s
    where d.observed_date >= s.since
    union all
    select d.*
    from intermediate.int_offer_daily as d
    cross join settings as s
    semi join last_before as b on d.offer_id = b.offer_id and d.observed_date = b.observed_date
    where d.observed_date >= s.first_day and d.observed_date < s.since
),

closes as (
    -- each offer's daily closes, with the day of its next close: a close stands for the offer on
    -- the days up to that one (an offer's last close stands until the data ends)
    select
        d.offer_id,
        d.observed_date,
        d.vendor,
        d.gpu_model,
        d.offer_kind,
        d.billing_period,
        d.counted,
        -- a price rounded to 0 CNY is as far from the market as prices go
        ln(greatest(d.close_price_cny_per_gpu_hour::double, 1e-9)) as log_price,
        lead(d.observed_date) over (partition by d.offer_id order by d.observed_date)
            as next_date
    from standing as d
),

judged_days as (
    -- the days rebuilt: those with observations (no market is needed where no price is judged)
    select distinct c.observed_date as market_date
    from closes as c
    cross join settings as s
    where c.observed_date >= s.since
),

market as (
    -- counted offers only: a template's invented prices and a second copy of one offer (an
    -- aggregator's, a second path's) do not vote on the market (docs/signals.md, "Counted once")
    select
        m.market_date,
        c.gpu_model,
        c.offer_kind,
        c.billing_period,
        c.vendor,
        c.log_price
    from closes as c
    cross join params as p
    inner join judged_days as m
        on c.observed_date <= m.market_date
        and m.market_date < coalesce(c.next_date, m.market_date + 1)
        and m.market_date <= c.observed_date + (p.market_days - 1)
    where c.counted
),

vendor_medians as (
    select
        market_date,
        gpu_model,
        offer_kind,
        billing_period,
        vendor,
        median(log_price) as vendor_log_median
    from market
    group by market_date, gpu_model, offer_kind, billing_period, vendor
),

card_medians as (
    select
        market_date,
        gpu_model,
        offer_kind,
        billing_period,
        median(vendor_log_median) as log_median,
        count(*) as vendors
    from vendor_medians
    group by market_date, gpu_model, offer_kind, billing_period
)

select
    c.market_date,                                      -- the UTC day judged
    c.gpu_model,
    c.offer_kind,
    c.billing_period,
    c.log_median,                                       -- the cross-vendor median, log CNY/GPU-h
    c.vendors,                                          -- vendors in the market
    case
        when c.vendors >= any_value(p.min_vendors)
            then any_value(p.mads_allowed)
            * greatest(median(abs(v.vendor_log_median - c.log_median)), any_value(p.min_mad))
    end as log_limit                                    -- beyond it either way: an outlier
from card_medians as c
inner join vendor_medians as v
    on c.market_date = v.market_date
    and c.gpu_model = v.gpu_model
    and c.offer_kind = v.offer_kind
    and c.billing_period = v.billing_period
cross join params as p
group by c.market_date, c.gpu_model, c.offer_kind, c.billing_period, c.log_median, c.vendors
