/* Cheapest offers: the 3 cheapest offers per card, offer kind, billing period, country and region
   group (province in China, country elsewhere), by each offer's latest price per GPU-hour. */
-- alias: cheapest_offers
with params as (
    -- How many offers each group lists: the few a buyer compares, not the whole market.
    select 3 as offers_per_group
),

offers as (
    select
        *,
        case when country = 'CN' then coalesce(province_or_state, 'CN') else country end
            as region_group
    from marts.latest_prices
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
    url
from ranked
where rank <= (select p.offers_per_group from params as p)
order by gpu_model, offer_kind, billing_period, country, region_group, rank
