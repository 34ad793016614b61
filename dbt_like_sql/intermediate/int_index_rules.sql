/* The rules of the price index, one row (docs/price-index.md): the method version every
   published row carries; the largest day-on-day price relative taken as a price change (beyond
   it, either way, a relative is an error and left out); how many hours before its day's end an
   offer's last look must be for its close to count (a staler source does not carry the index);
   how many vendors a day's change needs to print a level; the trailing days that define a
   series' vendors (the coverage share's denominator); the bootstrap's replicates and interval.
   intermediate.int_index_offer_days and pipelines/index/ read them here. */
with params as (
    select
        'gpi-1' as method_version,         -- bumped when any rule or the method changes
        3.0::double as max_relative,       -- a relative beyond 3x or 1/3x: an error
        12 as stale_after_hours,           -- last look more than 12 h before the day's end: stale
        2 as min_vendors,                  -- fewer vendors behind a day's change: no level shown
        28 as coverage_days,               -- vendors seen in these days make the series' vendors
        200 as bootstrap_replicates,       -- vendor-level Poisson bootstrap replicates
        0.90::double as interval_level     -- the level's and the change's interval: 5-95 %
)

select
    method_version,
    max_relative,
    stale_after_hours,
    min_vendors,
    coverage_days,
    bootstrap_replicates,
    interval_level
from params
