/* Cheapest offers: the 3 cheapest offers per card, offer kind, billing period, country and region
   group (province in China, country elsewhere), by each offer's latest price per GPU-hour. A price
   held back as a possible outlier (marts.price_outliers: far from its card's market, not yet
   confirmed by a later crawl) is left out until it is confirmed, and so is an offer not
   counted (a non-direct twin of a direct offer: docs/signals.md, "Counted once"). */
-- alias: cheapest_offers
with params as (
    -- How many offers each group lists: the few a buyer compares, not the whole market.
    select 3 as offers_per_group
),

offers as (
    select
        l.*,
        case when l.country = 'CN' then coalesce(l.province_or_state, 'CN') else l.country end
            as region_group
    from marts.latest_prices as l
    left join marts.price_outliers as h
        on l.offer_id = h.offer_id and h.outlier_status = 'held'
    where h.offer_id is null and l.counted
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
    price_basis_label                                   -- where the price comes from, in words
from ranked
where rank <= (select p.offers_per_group from params as p)
order by gpu_model, offer_kind, billing_period, country, region_group, rank
