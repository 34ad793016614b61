/* Held observations: the observations the price alerts (drop, new_low, watch) must not see yet,
   possible outliers. An observation is held when its price per GPU-hour is beyond its card's
   outlier limit either way in the market of its own UTC day (intermediate.int_outlier_markets,
   per card, offer kind and billing period, judged cards only) and the offer's previous
   observation, if it came within `confirm_within_days` before (intermediate.int_outlier_rules),
   did not list the same price (within the same_price_tolerance): the first sighting of an
   outlying price. The offer's next observation, when it lists that price again on a UTC day at
   most confirm_within_days later, confirms it (confirmed_at): from then on the price counts, and
   a drop to it is reported at confirmed_at. A held observation that is never confirmed never
   counts, not even as an earlier low.
   Judged by its own day's market (since 2026-12-06, issue 45; before, every observation was
   judged again against today's market every hour): an observation's held status no longer
   moves when a later day's market moves, and a confirmation must come within the window.
   Incremental by day with a lookback of confirm_within_days (the header states it; a test holds
   them equal): new observations can confirm a held observation of the days before, and a held
   observation reads the looks of the confirm_within_days before it. A look's UTC day is counted
   from its epoch, not by timezone('UTC', ...): the same day, and the zone look-up per row was
   most of the hour at 20,000 offers (issue 45, k21). */
-- incremental: observed_date lookback 7 days
-- grain: offer_id, observed_at
-- audit: confirmed_later: confirmed_at <= observed_at
with params as (   -- the rules, in their one home
    select
        same_price_tolerance,
        confirm_within_days
    from intermediate.int_outlier_rules
),

outlying as (
    -- the looks of the rebuilt days beyond their own day's market limit: only these days' rows
    -- are scanned and judged (since_day() is a constant, so the scan skips the older row groups)
    select
        o.offer_id,
        o.observed_at
    from observations as o
    -- the UTC day from the instant's epoch (see `sequenced`): exact, and a third of the time of
    -- timezone('UTC', ...) over every observation of the rebuilt days
    inner join intermediate.int_outlier_markets as m
        on date '1970-01-01' + (epoch_us(o.observed_at) // 86400000000)::integer = m.market_date
        and o.gpu_model = m.gpu_model
        and o.offer_kind = m.offer_kind
        and o.billing_period = m.billing_period
    where
        -- the join's own day is the exact bound (market_date); this one skips row groups
        o.observed_hour >= since_day()::timestamptz - interval 1 day
        and m.market_date >= since_day()
        -- a price rounded to 0 CNY is as far from the market as prices go
        and abs(ln(greatest(o.price_per_gpu_hour_cny::double, 1e-9)) - m.log_median) > m.log_limit
),

outlying_offers as (
    select distinct offer_id
    from outlying
),

sequenced as (
    -- the looks of offers outlying on a rebuilt day, each beside its neighbours: a held look's
    -- previous look counts from confirm_within_days before the first day rebuilt
    select
        d.offer_id,
        d.observed_at,
        d.observed_date,
        d.price_amount,
        lag(d.price_amount) over offer_history as previous_price_amount,
        lag(d.observed_date) over offer_history as previous_observed_date,
        lead(d.price_amount) over offer_history as next_price_amount,
        lead(d.observed_at) over offer_history as next_observed_at,
        lead(d.observed_date) over offer_history as next_observed_date
    from (
        -- an observation's UTC day is the whole days since the epoch (the instant's own count,
        -- whatever the session's TimeZone; every observation is after 1970, so `//` floors): the
        -- same day as timezone('UTC', observed_at)::date, without a zone look-up per row
        select
            h.offer_id,
            h.observed_at,
            h.price_amount,
            date '1970-01-01' + (epoch_us(h.observed_at) // 86400000000)::integer
                as observed_date
        from observations as h
        cross join params as p
        semi join outlying_offers as e on h.offer_id = e.offer_id
        where
            -- observed_hour is stored: DuckDB skips the older row groups by their min/max, but
            -- only by a constant: since_hour(8) is the day before the confirm window
            -- (confirm_within_days, 7, the header's lookback, written out; a test holds it to the
            -- rule). Read from the rule's row, the scan's reach was left to the join's runtime
            -- filter, which differs build to build. The exact bound is the day's, below.
            h.observed_hour >= since_hour(8)
            and date '1970-01-01' + (epoch_us(h.observed_at) // 86400000000)::integer
            >= since_day() - p.confirm_within_days
    ) as d
    window offer_history as (partition by d.offer_id order by d.observed_at)
)

select
    s.offer_id,
    s.observed_at,                                      -- the held observation
    s.observed_date,                                    -- its UTC day
    case
        when
            abs(s.next_price_amount - s.price_amount) <= r.same_price_tolerance * s.price_amount
            and s.next_observed_date <= s.observed_date + r.confirm_within_days
            then s.next_observed_at
    end as confirmed_at                                 -- null: not (yet) confirmed
from sequenced as s
cross join params as r
semi join outlying as x on s.offer_id = x.offer_id and s.observed_at = x.observed_at
where
    s.previous_price_amount is null
    or s.previous_observed_date < s.observed_date - r.confirm_within_days
    or abs(s.price_amount - s.previous_price_amount)
    > r.same_price_tolerance * s.previous_price_amount
order by s.observed_date, s.offer_id, s.observed_at
