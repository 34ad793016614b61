/* The rules of the price index, one row (docs/price-index.md): the method version every
   published row carries; the largest price relative taken as a price change (beyond it, either
   way, a relative is an error and left out); how many hours before its day's end an offer's
   last look must be for its close to count (a staler source does not carry the index); how
   many vendors a day's change needs to print a level; how far back a close is matched; how many
   closes a newcomer is averaged over before it enters; the trailing days that define a
   series' vendors (the coverage share's denominator); the bootstrap's replicates and interval.
   intermediate.int_index_offer_days and pipelines/index/ read them here. */
with params as (
    select
        'gpi-3' as method_version,         -- bumped when any rule or the method changes
        3.0::double as max_relative,       -- a relative beyond 3x or 1/3x: an error
        -- last look more than 20 h before the day's end: stale. A once-a-day public tracker reads
        -- early in the UTC day (gpu-rental-prices: fetched ~05:50, committed 06:00-10:30 UTC), and
        -- that look is its day's price; at 12 h (gpi-1) 44 of its 46 days were stale and the
        -- world index printed a level on 2. A look from the previous local evening still is not.
        20 as stale_after_hours,
        2 as min_vendors,                  -- fewer vendors behind a day's change: no level shown
        -- an offer's close is matched against its last counted close this many days back at
        -- most (gpi-2: 1, the day before only), so a move and its reversal across a stale or
        -- missing close both enter the chain and cancel
        7 as match_window_days,
        -- a newcomer (an offer entering after the series' first day, or again after a longer gap)
        -- is matched only after this many closes, its first relative taken against their
        -- geometric mean: a volatile vendor joining enters at its own average, not at one draw
        -- of its range (gpi-2: entered on its first price)
        7 as entry_days,
        28 as coverage_days,               -- vendors seen in these days make the series' vendors
        200 as bootstrap_replicates,       -- vendor-level Poisson bootstrap replicates
        0.90::double as interval_level     -- the level's and the change's interval: 5-95 %
)

select
    method_version,                    -- the method's version, on every published row
    max_relative,                      -- a day-on-day relative beyond it either way: an error
    stale_after_hours,                 -- a last look this long before its day's end: stale
    min_vendors,                       -- vendors a day's change needs to print a level
    match_window_days,                 -- the furthest back a close is matched, in days
    entry_days,                        -- a newcomer's closes averaged before it is matched
    coverage_days,                     -- vendors seen in these days make the series' vendors
    bootstrap_replicates,              -- vendor-level Poisson bootstrap replicates
    interval_level                     -- the coverage of the level's and change's interval
from params
