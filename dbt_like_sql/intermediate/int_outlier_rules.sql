/* The rules of the price-outlier test, one row (docs/data-quality.md, "Outliers across vendors"):
   a price is an outlier when its log is more than mads_allowed x max(MAD, min_mad) from its
   card's cross-vendor median, a market needs min_vendors vendors seen in the last market_days
   days, and a later price within same_price_tolerance of an outlier confirms it when it comes
   within confirm_within_days (the days an offer's previous look counts as its previous price,
   too). intermediate.int_outlier_markets, marts.price_outliers, marts.held_observations and
   intermediate.int_index_offer_days read them here (the last two state confirm_within_days as
   their `lookback`, held equal by tests/sql/test_price_outliers.py). */
with params as (
    select
        3.0 as mads_allowed,               -- k
        ln(2) as min_mad,                  -- the MAD's floor: k x ln 2 = a factor of 8
        3 as min_vendors,                  -- fewer vendors: no market to judge by
        30 as market_days,                 -- offers seen in these days make the market
        0.02 as same_price_tolerance,      -- a confirming price: within 2 % of the outlier
        -- a confirming look comes within a week of the outlier, and a look more than a week
        -- before a price is not its previous one (an offer back after a longer gap shows a
        -- first sighting): so an hour changes held observations of its last week only
        7 as confirm_within_days
)

select
    mads_allowed,                      -- k: an outlier is more than k x max(MAD, min_mad) away
    min_mad,                           -- the MAD's floor (log price)
    min_vendors,                       -- fewer vendors: no market to judge by
    market_days,                       -- offers seen in these days make the market
    same_price_tolerance,              -- a confirming later price: within this share
    confirm_within_days                -- ... on a UTC day at most this many days later
from params
