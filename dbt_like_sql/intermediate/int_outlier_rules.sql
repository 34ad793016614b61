/* The rules of the price-outlier test, one row (docs/data-quality.md, "Outliers across vendors"):
   a price is an outlier when its log is more than mads_allowed x max(MAD, min_mad) from its
   card's cross-vendor median, a market needs min_vendors vendors seen in the last market_days
   days, and a later price within same_price_tolerance of an outlier confirms it.
   marts.price_outliers and marts.held_observations read them here. */
with params as (
    select
        3.0 as mads_allowed,               -- k
        ln(2) as min_mad,                  -- the MAD's floor: k x ln 2 = a factor of 8
        3 as min_vendors,                  -- fewer vendors: no market to judge by
        30 as market_days,                 -- offers seen in these days make the market
        0.02 as same_price_tolerance       -- a confirming price: within 2 % of the outlier
)

select
    mads_allowed,                      -- k: an outlier is more than k x max(MAD, min_mad) away
    min_mad,                           -- the MAD's floor (log price)
    min_vendors,                       -- fewer vendors: no market to judge by
    market_days,                       -- offers seen in these days make the market
    same_price_tolerance               -- a confirming later price: within this share
from params
