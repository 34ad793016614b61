/* Price outliers: every offer of marts.latest_prices, its latest price per GPU-hour set against
   the market for its card, offer kind and billing period, and whether it is held back.
   The market is a cross-vendor median over the offers seen in the last `market_days` days: each
   vendor's median of log price, then the median over vendors (a vendor listing 200 offers votes
   once, so one source cannot move it), with the spread MAD = the median distance of the
   vendors' medians from it. A price is an outlier when its log is more than
   `mads_allowed` x max(MAD, `min_mad`) from the median: with k = 3 and a MAD of at least ln 2,
   never within a factor of 8 of the market (real spreads between vendors, regions and tiers
   reach about 5x; docs/data-quality.md, "Outliers across vendors"). Fewer than `min_vendors`
   vendors: not judged (outlier_factor_limit null, status 'ok'). Only counted offers make the market
   (not a template's, nor a second copy of an offer); every offer is judged against it.
   An outlier is 'held' (kept out of marts.cheapest_offers and of the drop, new_low and watch
   alerts) until a later crawl confirms it: 'confirmed' when the offer's previous observation,
   if on a UTC day at most `confirm_within_days` before, listed the same price, within
   `same_price_tolerance`. The rules (k, the MAD floor, the vendors and days of a market, the
   tolerance, the confirm window) live in intermediate.int_outlier_rules, which
   marts.held_observations reads too. This is the latest verdict, against today's market; the
   alerts' held observations are each judged by the market of their own day
   (intermediate.int_outlier_markets), so for an offer whose latest look is older than today
   the two may differ. Rebuilt in full every run (a new median can change any offer's
   verdict), bounded: it reads marts.latest_prices (one row per offer) and the outliers' looks
   of the confirm window before their latest one, not the history. */
-- grain: offer_id
-- audit: status_known: outlier_status not in ('ok', 'held', 'confirmed')
-- alias: price_outliers
with params as (   -- the rules, in their one home
    select * from intermediate.int_outlier_rules
),

offers as (
    select
        *,
        -- a price rounded to 0 CNY is as far from the market as prices go
        ln(greatest(price_per_gpu_hour_cny::double, 1e-9)) as log_price
    from marts.latest_prices
),

market as (
    -- counted offers only: a template's invented prices and a second copy of one offer (an
    -- aggregator's, a second path's) do not vote on the market (docs/signals.md, "Counted once")
    select o.*
    from offers as o, params as p
    where
        o.counted
        and o.last_seen_at >= (select max(l.last_seen_at) from offers as l) - to_days(p.market_days)
),

vendor_medians as (
    select
        gpu_model,
        offer_kind,
        billing_period,
        vendor,
        median(log_price) as vendor_log_median
    from market
    group by gpu_model, offer_kind, billing_period, vendor
),

card_medians as (
    select
        gpu_model,
        offer_kind,
        billing_period,
        median(vendor_log_median) as log_median,
        count(*) as vendors
    from vendor_medians
    group by gpu_model, offer_kind, billing_period
),

card_limits as (
    select
        c.gpu_model,
        c.offer_kind,
        c.billing_period,
        c.log_median,
        c.vendors,
        case
            when c.vendors >= any_value(p.min_vendors)
                then any_value(p.mads_allowed)
                * greatest(median(abs(v.vendor_log_median - c.log_median)), any_value(p.min_mad))
        end as log_limit
    from card_medians as c
    inner join vendor_medians as v
        on c.gpu_model = v.gpu_model
        and c.offer_kind = v.offer_kind
        and c.billing_period = v.billing_period
    cross join params as p
    group by c.gpu_model, c.offer_kind, c.billing_period, c.log_median, c.vendors
),

judged as (
    select
        o.*,
        l.log_median,
        l.log_limit,
        coalesce(l.vendors, 0) as vendors,
        coalesce(abs(o.log_price - l.log_median) > l.log_limit, false) as outlying,
        -- the first UTC day of its confirm window: a column of the offer, so that the window's
        -- test below is a filter on the join's rows, not a join of its own against params
        timezone('UTC', o.last_seen_at)::date - p.confirm_within_days as confirm_from
    from offers as o
    cross join params as p
    left join card_limits as l
        on o.gpu_model = l.gpu_model
        and o.offer_kind = l.offer_kind
        and o.billing_period = l.billing_period
),

previous as (
    -- each outlier's observation before its latest one (outliers are few: a small join). The
    -- shown observations are staging.stg_observations' rows without the counted-once search,
    -- which would run over the whole history for a flag this does not read
    select
        j.offer_id,
        max(h.observed_at) as previous_observed_at,
        arg_max(h.price_amount, h.observed_at) as previous_price_amount
    from judged as j
    inner join staging.stg_shown_observations as h
        on j.offer_id = h.offer_id and j.last_seen_at > h.observed_at
    where
        j.outlying
        -- a look more than the confirm window before is not the previous price
        and timezone('UTC', h.observed_at)::date >= j.confirm_from
        -- the same bound for all outliers at once (their earliest window's start, a day of
        -- slack as held_observations keeps), on the stored observed_hour: DuckDB pushes it into
        -- the scan and skips the older row groups, where the join's own bound, per offer, reads
        -- the whole history
        and h.observed_hour >= (
            select min(o.confirm_from)::timestamptz - interval 1 day
            from judged as o
            where o.outlying
        )
    group by j.offer_id
)

select
    j.offer_id,
    j.source,
    j.vendor,
    j.gpu_model,
    j.offer_kind,
    j.billing_period,
    j.region_code,
    j.sku,
    j.price_amount,                                     -- as listed, per billing_period
    j.currency,
    j.price_per_gpu_hour_cny,                           -- one whole-GPU equivalent, 1 hour
    exp(j.log_median) as card_median_cny_per_gpu_hour,  -- the cross-vendor median
    j.price_per_gpu_hour_cny::double / exp(j.log_median)
        as times_card_median,                           -- 0.05: a twentieth of the market
    exp(j.log_limit) as outlier_factor_limit,           -- beyond this factor either way (null:
    j.vendors as vendors_compared,                      -- fewer than min_vendors, not judged)
    pr.previous_price_amount,                           -- outliers only: the observation before
    pr.previous_observed_at,
    case
        when not j.outlying then 'ok'
        when
            abs(j.price_amount - pr.previous_price_amount)
            <= p.same_price_tolerance * pr.previous_price_amount
            then 'confirmed'
        else 'held'
    end as outlier_status,                              -- 'ok' | 'held' | 'confirmed'
    j.last_seen_at,
    j.url
from judged as j
cross join params as p
left join previous as pr on j.offer_id = pr.offer_id
order by j.gpu_model, j.offer_kind, j.billing_period, j.price_per_gpu_hour_cny, j.offer_id
