/* the lowest price of a `gpu_model` × `offer_kind` × `region_group` (province in China, country
   elsewhere), over every vendor, is lower than every earlier observation in that group by at
   least `min_improvement_pct` % (1 %), and the offer behind it has never before been listed at
   or below this amount in its own currency (or is new): a USD offer that only got cheaper in
   CNY is not a new low */
-- key: gpu_model, offer_kind, region_group, price_per_gpu_hour_cny
-- Rule `new_low`: the lowest price of a gpu_model x offer_kind x region_group, over every vendor,
-- lower than every earlier observation in that group by at least $min_improvement_pct %, at an
-- observation time among the new observations, set by an offer whose listed price is its lowest
-- yet (or a new offer): a low in CNY that only an exchange-rate move made is not a new low.
-- Only crawled observations: one reached via an archive (a backfill, the public price record) is
-- history, and a crawl's price below a years-old listing is no news of this run.
-- Possible outliers (alert_held_observations, copied from marts.held_observations) are left out, as
-- candidates and as earlier lows: an outlying price counts from the crawl that confirms it on.
-- Parameters: $min_improvement_pct and the offer filter $gpu_models, $offer_kinds,
-- $billing_periods (an empty list: every value).
with counted as (
    select o.*
    from staging.stg_observations as o
    anti join alert_held_observations as h
        on o.offer_id = h.offer_id and o.observed_at = h.observed_at
    where o.reaches_via is distinct from 'archive'
),

instants as (   -- the group's lowest price at each observation time
    select
        o.gpu_model, o.offer_kind, o.region_group, o.observed_at,
        min(o.price_per_gpu_hour_cny) as low_cny_per_gpu_hour,
        arg_min(o.offer_id, o.price_per_gpu_hour_cny) as offer_id
    from counted as o
    where (len($gpu_models::varchar[]) = 0 or list_contains($gpu_models::varchar[], o.gpu_model))
        and (
            len($offer_kinds::varchar[]) = 0
            or list_contains($offer_kinds::varchar[], o.offer_kind)
        )
        and (
            len($billing_periods::varchar[]) = 0
            or list_contains($billing_periods::varchar[], o.billing_period)
        )
    group by o.gpu_model, o.offer_kind, o.region_group, o.observed_at
),

running as (
    select
        *,
        min(low_cny_per_gpu_hour) over (
            partition by gpu_model, offer_kind, region_group order by observed_at
            rows between unbounded preceding and 1 preceding
        ) as earlier_low_cny_per_gpu_hour,
        count(*) over (
            partition by gpu_model, offer_kind, region_group order by observed_at
            rows between unbounded preceding and 1 preceding
        ) as earlier_observations
    from instants
),

below_earlier as (   -- the instants below every earlier one, and by how much
    select
        *,
        100 * (earlier_low_cny_per_gpu_hour - low_cny_per_gpu_hour)::double
        / earlier_low_cny_per_gpu_hour::double as improvement_pct
    from running
    where earlier_low_cny_per_gpu_hour is not null
        and low_cny_per_gpu_hour < earlier_low_cny_per_gpu_hour
)

select
    o.offer_id, o.source, o.vendor, o.gpu_model, o.gpu_variant, o.gpu_count, o.gpu_fraction,
    o.offer_kind, o.billing_period, o.region_code, o.region_group, o.country,
    o.province_or_state, o.city, o.sku, o.price_amount, o.currency, o.price_per_gpu_hour_cny,
    o.price_per_gpu_hour_usd, o.observed_at, o.url,
    r.earlier_low_cny_per_gpu_hour, r.earlier_observations, r.improvement_pct
from below_earlier as r
inner join staging.stg_observations as o
    on r.offer_id = o.offer_id and r.observed_at = o.observed_at
where r.improvement_pct >= $min_improvement_pct
    and exists (
        select 1 from alert_new_observations as n
        where n.offer_id = r.offer_id and n.observed_at = r.observed_at
    )
    and not exists (
        select 1 from counted as e
        where e.offer_id = r.offer_id and e.observed_at < r.observed_at
            and e.price_amount <= o.price_amount
    )
order by r.observed_at, r.gpu_model
