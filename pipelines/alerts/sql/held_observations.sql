-- The observations the price rules (drop, new_low) must not see yet: possible outliers. An
-- observation is held when its price per GPU-hour is beyond its card's outlier limit either way
-- (today's market: marts.price_outliers, per card, offer kind and billing period, judged cards
-- only) and the offer's previous observation did not list the same price (within
-- $same_price_tolerance): the first sighting of an outlying price. The offer's next observation,
-- when it lists that price again, confirms it (confirmed_at): from then on the price counts, and
-- a drop to it is reported at confirmed_at. A held observation that is never confirmed never
-- counts, not even as an earlier low. Parameters: $same_price_tolerance (the mart's).
create or replace temp table alert_held_observations as
with limits as (
    select distinct gpu_model, offer_kind, billing_period,
           ln(card_median_cny_per_gpu_hour) as log_median,
           ln(outlier_factor_limit) as log_limit
    from marts.price_outliers
    where outlier_factor_limit is not null
),
outlying as (
    select o.offer_id, o.observed_at
    from observations as o
    join limits as l using (gpu_model, offer_kind, billing_period)
    where abs(ln(greatest(o.price_per_gpu_hour_cny::double, 1e-9)) - l.log_median) > l.log_limit
),
sequenced as (   -- the observations of offers that were ever outlying, each beside its neighbours
    select h.offer_id, h.observed_at, h.price_amount,
           lag(h.price_amount) over offer_history as previous_price_amount,
           lead(h.price_amount) over offer_history as next_price_amount,
           lead(h.observed_at) over offer_history as next_observed_at
    from observations as h
    semi join (select distinct offer_id from outlying) as x on x.offer_id = h.offer_id
    window offer_history as (partition by h.offer_id order by h.observed_at)
)
select s.offer_id, s.observed_at,
       case when abs(s.next_price_amount - s.price_amount)
                 <= $same_price_tolerance * s.price_amount
            then s.next_observed_at end as confirmed_at
from sequenced as s
semi join outlying as x on x.offer_id = s.offer_id and x.observed_at = s.observed_at
where s.previous_price_amount is null
   or abs(s.price_amount - s.previous_price_amount) > $same_price_tolerance * s.previous_price_amount
