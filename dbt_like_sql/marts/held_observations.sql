/* Held observations: the observations the price alerts (drop, new_low, watch) must not see yet,
   possible outliers. An observation is held when its price per GPU-hour is beyond its card's
   outlier limit either way (today's market: marts.price_outliers, per card, offer kind and
   billing period, judged cards only) and the offer's previous observation did not list the same
   price (within the same_price_tolerance of intermediate.int_outlier_rules): the first sighting
   of an outlying price. The offer's next observation, when it lists that price again, confirms
   it (confirmed_at): from then on the price counts, and a drop to it is reported at
   confirmed_at. A held observation that is never confirmed never counts, not even as an earlier
   low. Rebuilt in full every run, as marts.price_outliers is. */
-- grain: offer_id, observed_at
-- audit: confirmed_later: confirmed_at <= observed_at
with limits as (
    select distinct
        gpu_model,
        offer_kind,
        billing_period,
        ln(card_median_cny_per_gpu_hour) as log_median,
        ln(outlier_factor_limit) as log_limit
    from marts.price_outliers
    where outlier_factor_limit is not null
),

outlying as (
    select
        o.offer_id,
        o.observed_at
    from observations as o
    inner join limits as l
        on o.gpu_model = l.gpu_model
        and o.offer_kind = l.offer_kind
        and o.billing_period = l.billing_period
    where abs(ln(greatest(o.price_per_gpu_hour_cny::double, 1e-9)) - l.log_median) > l.log_limit
),

outlying_offers as (
    select distinct offer_id
    from outlying
),

sequenced as (
    -- the observations of offers that were ever outlying, each beside its neighbours
    select
        h.offer_id,
        h.observed_at,
        h.price_amount,
        lag(h.price_amount) over offer_history as previous_price_amount,
        lead(h.price_amount) over offer_history as next_price_amount,
        lead(h.observed_at) over offer_history as next_observed_at
    from observations as h
    semi join outlying_offers as e on h.offer_id = e.offer_id
    window offer_history as (partition by h.offer_id order by h.observed_at)
)

select
    s.offer_id,
    s.observed_at,                                      -- the held observation
    case
        when abs(s.next_price_amount - s.price_amount) <= r.same_price_tolerance * s.price_amount
            then s.next_observed_at
    end as confirmed_at                                 -- null: not (yet) confirmed
from sequenced as s
cross join intermediate.int_outlier_rules as r
semi join outlying as x on s.offer_id = x.offer_id and s.observed_at = x.observed_at
where
    s.previous_price_amount is null
    or abs(s.price_amount - s.previous_price_amount)
    > r.same_price_tolerance * s.previous_price_amount
order by s.offer_id, s.observed_at
