-- How old the prices the page is built from are: the counted latest prices (marts.latest_prices,
-- as the cheapest offers, the signals and the claims count them), how many are older than the
-- horizon, and the newest as-of date with its age (the macros of
-- pipelines/warehouse/sql/price_age_macros.sql). The cheapest offers leave the old ones out.
with aged as (
    select
        price_as_of(prices_as_of, last_seen_at) as as_of,
        price_age_days(price_as_of(prices_as_of, last_seen_at), price_reference_day()) as age_days
    from marts.latest_prices
    where counted
)

select
    count(*) as offers,
    count(*) filter (where age_days > price_horizon_days()) as old_offers,
    max(as_of) as newest_as_of,
    price_age_days(max(as_of), price_reference_day()) as newest_age_days,
    price_horizon_days() as horizon_days
from aged
