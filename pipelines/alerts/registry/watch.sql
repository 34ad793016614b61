/* a current offer of `marts.latest_prices` (seen in its source's latest crawl, not marked
   unavailable) matching a `[[watch]]` entry costs at most its `max_price_cny_per_gpu_hour` */
-- key: offer_id, since
-- Rule `watch`: current offers of one [[watch]] entry at or below its ceiling. A current offer
-- is one seen in its source's latest crawl (within latest_crawl_window of the source's newest
-- observation) and not marked unavailable; `since` is when its price last went to or below the
-- ceiling, so a price that rises above it and comes back is a new alert, and one that stays
-- there is not. An offer whose latest price is held back as a possible outlier
-- (alert_held_observations, copied from marts.held_observations) waits for the crawl that
-- confirms it. An offer reached via an archive (a backfill, the public price record) is history,
-- never current.
-- Parameters: $gpu_model; $region_column (province_or_state | city | country) and $region_value;
-- $offer_kind, $billing_period (null: any); $ceiling (CNY per GPU-hour).
with params as (
    select interval 1 hour as latest_crawl_window
),

current_offers as (
    select l.*
    from marts.latest_prices as l, params as p
    where l.gpu_model = $gpu_model
        and case $region_column
            when 'province_or_state' then l.province_or_state
            when 'city' then l.city
            when 'country' then l.country
        end = $region_value
        and ($offer_kind is null or l.offer_kind = $offer_kind)
        and ($billing_period is null or l.billing_period = $billing_period)
        and l.price_per_gpu_hour_cny <= $ceiling
        and coalesce(l.available, true)
        and l.reaches_via is distinct from 'archive'
        and l.last_seen_at >= (
            select max(s.last_seen_at) from marts.latest_prices as s
            where s.source = l.source
        ) - p.latest_crawl_window
        and not exists (
            select 1 from alert_held_observations as h
            where h.offer_id = l.offer_id and h.observed_at = l.last_seen_at
                and h.confirmed_at is null
        )
),

last_above as (
    select h.offer_id, max(h.observed_at) as last_above_at
    from observations as h
    semi join current_offers as c on h.offer_id = c.offer_id
    where h.price_per_gpu_hour_cny > $ceiling
    group by h.offer_id
),

streak as (
    select h.offer_id, min(h.observed_at) as since
    from observations as h
    semi join current_offers as c on h.offer_id = c.offer_id
    left join last_above as a on h.offer_id = a.offer_id
    where h.price_per_gpu_hour_cny <= $ceiling
        and (a.last_above_at is null or h.observed_at > a.last_above_at)
    group by h.offer_id
)

select
    c.offer_id, c.source, c.vendor, c.gpu_model, c.gpu_variant, c.gpu_count, c.gpu_fraction,
    c.offer_kind, c.billing_period, c.region_code, c.country, c.province_or_state, c.city,
    c.sku, c.price_amount, c.currency, c.price_per_gpu_hour_cny, c.price_per_gpu_hour_usd,
    c.last_seen_at as observed_at, c.url, s.since
from current_offers as c
inner join streak as s on c.offer_id = s.offer_id
order by c.price_per_gpu_hour_cny, c.offer_id
