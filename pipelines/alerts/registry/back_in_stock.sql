/* an offer listed as out of stock at its previous look is in stock again, among the new
   observations (intermediate.int_price_changes, change of availability); a possible outlier
   held back (marts.held_observations) waits, as for `drop` */
-- key: offer_id, observed_at
select
    c.offer_id,
    c.observed_at,
    c.previous_observed_at,
    c.source,
    c.vendor,
    c.gpu_model,
    c.region_code,
    c.offer_kind,
    c.billing_period,
    c.sku,
    c.price_amount,
    c.currency,
    c.price_per_gpu_hour_cny,
    o.url
from intermediate.int_price_changes as c
inner join staging.stg_observations as o
    on c.offer_id = o.offer_id and c.observed_at = o.observed_at
semi join alert_new_observations as n
    on c.offer_id = n.offer_id and c.observed_at = n.observed_at
anti join alert_held_observations as h
    on c.offer_id = h.offer_id and c.observed_at = h.observed_at
where c.available and not c.previous_available
order by c.observed_at, c.offer_id
