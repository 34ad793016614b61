-- How old the prices the page is built from are: the counted latest prices (marts.latest_prices,
-- as the cheapest offers, the signals and the claims count them), how many are older than the
-- horizon, how many more (not older) are of offers their record no longer lists (last seen over
-- listing_lag_days() before the newest data of its crawled source or archive), and the newest
-- as-of date with its age (the macros of pipelines/warehouse/sql/price_age_macros.sql). The
-- cheapest offers leave both out (price_is_now).
with aged as (
    select
        counted,
        price_as_of(prices_as_of, last_seen_at) as as_of,
        price_age_days(price_as_of(prices_as_of, last_seen_at), price_reference_day())
            as age_days,
        days_behind(last_seen_at, max(last_seen_at) over (partition by price_origin(source)))
            as days_behind_record
    from marts.latest_prices
)

select
    count(*) as offers,
    count(*) filter (where age_days > price_horizon_days()) as old_offers,
    count(*) filter (
        where age_days <= price_horizon_days() and days_behind_record > listing_lag_days()
    ) as delisted_offers,
    max(as_of) as newest_as_of,
    price_age_days(max(as_of), price_reference_day()) as newest_age_days,
    price_horizon_days() as horizon_days,
    listing_lag_days() as listing_lag_days
from aged
where counted
