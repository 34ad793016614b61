/* Cheapest offers now: the 3 cheapest offers per card, offer kind, billing period, country and
   region group (province in China, country elsewhere), by each offer's latest price per GPU-hour,
   among the prices that are "now" (price_is_now: no older than the horizon, price_horizon_days(),
   180 days, and of an offer its record still lists, at most listing_lag_days() behind the newest
   data of its crawled source or archive: pipelines/warehouse/sql/price_age_macros.sql). The
   others are left out, not flagged: a rank is among the current offers only, so rank 1 is the
   cheapest price now; every offer of any age is in marts.latest_prices, and
   price_as_of(prices_as_of, last_seen_at) gives its as-of date there. Ages count to the day the
   mart is built (UTC). A price held back as a possible outlier (marts.price_outliers: far from
   its card's market, not yet confirmed by a later crawl) is left out until it is confirmed, and
   so is an offer not counted (a non-direct twin of a direct offer: docs/signals.md, "Counted
   once"). */
-- grain: gpu_model, offer_kind, billing_period, country, region_group, rank
-- audit: price_positive: coalesce(price_per_gpu_hour_cny, 0) <= 0
-- audit: ranks_from_one: rank < 1
-- alias: cheapest_offers
with params as (
    -- How many offers each group lists: the few a buyer compares, not the whole market.
    select 3 as offers_per_group
),

behind as (
    -- how far each offer trails the newest sighting of its record (crawled source or archive),
    -- over all the record's offers, held or not
    select
        *,
        days_behind(last_seen_at, max(last_seen_at) over (partition by price_origin(source)))
            as days_behind_record
    from marts.latest_prices
),

dated as (
    select
        l.*,
        case when l.country = 'CN' then coalesce(l.province_or_state, 'CN') else l.country end
            as region_group,
        price_as_of(l.prices_as_of, l.last_seen_at) as price_as_of
    from behind as l
    left join marts.price_outliers as h
        on l.offer_id = h.offer_id and h.outlier_status = 'held'
    where h.offer_id is null and l.counted
),

offers as (
    select
        *,
        price_age_days(price_as_of, price_reference_day()) as price_age_days
    from dated
    where
        price_is_now(
            price_age_days(price_as_of, price_reference_day()),
            days_behind_record,
            price_horizon_days()
        )
),

ranked as (
    select
        *,
        row_number() over (
            partition by gpu_model, offer_kind, billing_period, country, region_group
            order by price_per_gpu_hour_cny, vendor, offer_id
        ) as rank
    from offers
)

select
    gpu_model,
    offer_kind,
    billing_period,
    country,
    region_group,                                       -- province in China, country elsewhere
    rank,                                               -- 1 = cheapest; ties by vendor, offer id
    vendor,
    source,
    sku,
    region_code,
    gpu_fraction,
    gpu_count,
    price_per_gpu_hour_cny,                             -- one whole-GPU equivalent for one hour
    price_amount,                                       -- as listed, per billing_period
    currency,
    last_seen_at,
    url,
    price_basis,                                        -- live | captured | published | ...
    prices_as_of,
    price_basis_label,                                  -- where the price comes from, in words
    price_as_of,                        -- the date the price held: prices_as_of, else last seen
    price_age_days                      -- days from price_as_of to the day the mart was built
from ranked
where rank <= (select p.offers_per_group from params as p)
order by gpu_model, offer_kind, billing_period, country, region_group, rank
