/* a price change of one offer (`intermediate.int_price_changes`, listed currency) is at least
   `min_drop_pct` % below the offer's previous observation, and/or at least
   `min_below_median_pct` % below the median of its daily closes
   (`intermediate.int_offer_daily`) over the `median_days` (7) days before (needs
   `median_min_days` days of history); `require = "any"` or `"all"` of the configured tests */
-- key: offer_id, observed_at
-- Rule `drop`: a price change of one offer, among the new observations, at least $min_drop_pct %
-- below its previous observation and/or at least $min_below_median_pct % below the median of
-- its daily closes over the $median_days days before (a median of fewer than $median_min_days
-- days is no test); $require = 'all' needs every configured test, 'any' one of them.
-- A drop is measured in the listed currency (an exchange-rate move alone is not a drop); the CNY
-- figures ride along for reading.
-- Possible outliers (alert_held_observations, copied from marts.held_observations) wait: a
-- change to a held price is reported when a later crawl confirms it (at confirmed_at), one never
-- confirmed is not reported, and none is the previous price of a later change.
-- Parameters: the thresholds above (a null percentage skips its test) and the offer filter
-- $gpu_models, $offer_kinds, $billing_periods (an empty list: every value).
with candidates as (   -- price changes among the new observations; a held one when confirmed
    select
        c.offer_id, coalesce(h.confirmed_at, c.observed_at) as observed_at,
        c.observed_at as changed_at, c.previous_observed_at, c.previous_price_amount,
        c.previous_price_cny_per_gpu_hour, hp.offer_id is not null as previous_held
    from intermediate.int_price_changes as c
    left join alert_held_observations as h
        on c.offer_id = h.offer_id and c.observed_at = h.observed_at
    left join alert_held_observations as hp
        on c.offer_id = hp.offer_id and c.previous_observed_at = hp.observed_at
    semi join alert_new_observations as n
        on c.offer_id = n.offer_id and n.observed_at = coalesce(h.confirmed_at, c.observed_at)
    where c.price_amount <> c.previous_price_amount
        and (h.offer_id is null or h.confirmed_at is not null)
    -- a held change and the confirming one's own small change: the held one's previous price
    qualify row_number() over (
            partition by c.offer_id, coalesce(h.confirmed_at, c.observed_at)
            order by c.observed_at
        ) = 1
),

looked_up as (   -- a change after a held price: the offer's last observation before, not held
    select
        ca.offer_id, ca.observed_at, max(p.observed_at) as previous_observed_at,
        arg_max(p.price_amount, p.observed_at) as previous_price_amount,
        arg_max(p.price_per_gpu_hour_cny, p.observed_at) as previous_price_cny_per_gpu_hour
    from candidates as ca
    inner join staging.stg_observations as p
        on ca.offer_id = p.offer_id and ca.changed_at > p.observed_at
    anti join alert_held_observations as h
        on p.offer_id = h.offer_id and p.observed_at = h.observed_at
    where ca.previous_held
    group by ca.offer_id, ca.observed_at
),

previous as (
    select
        ca.offer_id, ca.observed_at,
        if(ca.previous_held, l.previous_observed_at, ca.previous_observed_at)
            as previous_observed_at,
        if(ca.previous_held, l.previous_price_amount, ca.previous_price_amount)
            as previous_price_amount,
        if(
            ca.previous_held, l.previous_price_cny_per_gpu_hour,
            ca.previous_price_cny_per_gpu_hour
        ) as previous_price_cny_per_gpu_hour
    from candidates as ca
    left join looked_up as l on ca.offer_id = l.offer_id and ca.observed_at = l.observed_at
),

changes as (
    select
        pr.offer_id, pr.observed_at, o.observed_date, pr.previous_price_amount,
        pr.previous_price_cny_per_gpu_hour, pr.previous_observed_at,
        round(
            100 * (o.price_amount - pr.previous_price_amount)
            / pr.previous_price_amount, 4
        )::double as price_change_pct,
        round(
            100 * (o.price_per_gpu_hour_cny - pr.previous_price_cny_per_gpu_hour)
            / pr.previous_price_cny_per_gpu_hour, 4
        )::double as price_change_pct_cny
    from previous as pr
    inner join staging.stg_observations as o
        on pr.offer_id = o.offer_id and pr.observed_at = o.observed_at
    where o.price_amount < pr.previous_price_amount
),

trailing_days as (   -- the offer's daily closes on the days before the change
    select
        ch.offer_id, ch.observed_at,
        median(d.close_price_amount)::double as median_price_amount,
        median(d.close_price_cny_per_gpu_hour)::double as median_price_cny_per_gpu_hour,
        count(*) as median_days
    from changes as ch
    inner join intermediate.int_offer_daily as d
        on ch.offer_id = d.offer_id
        and d.observed_date >= ch.observed_date - $median_days::integer
        and ch.observed_date > d.observed_date
    group by ch.offer_id, ch.observed_at
),

measured as (
    select
        o.offer_id, o.source, o.vendor, o.gpu_model, o.gpu_variant, o.gpu_count,
        o.gpu_fraction, o.offer_kind, o.billing_period, o.region_code, o.region_group,
        o.country, o.province_or_state, o.city, o.sku, o.price_amount, o.currency,
        o.price_per_gpu_hour_cny, o.price_per_gpu_hour_usd, o.observed_at, o.url,
        ch.previous_price_amount, ch.previous_price_cny_per_gpu_hour, ch.previous_observed_at,
        ch.price_change_pct, ch.price_change_pct_cny,
        t.median_price_amount, t.median_price_cny_per_gpu_hour,
        coalesce(t.median_days, 0) as median_days,
        100 * (t.median_price_amount - o.price_amount::double)
        / t.median_price_amount as below_median_pct
    from changes as ch
    inner join staging.stg_observations as o
        on ch.offer_id = o.offer_id and ch.observed_at = o.observed_at
    left join trailing_days as t on ch.offer_id = t.offer_id and ch.observed_at = t.observed_at
    where (len($gpu_models::varchar[]) = 0 or list_contains($gpu_models::varchar[], o.gpu_model))
        and (
            len($offer_kinds::varchar[]) = 0
            or list_contains($offer_kinds::varchar[], o.offer_kind)
        )
        and (
            len($billing_periods::varchar[]) = 0
            or list_contains($billing_periods::varchar[], o.billing_period)
        )
),

scored as (
    select
        *,
        $min_drop_pct is not null and -price_change_pct >= $min_drop_pct as drop_hit,
        coalesce(
            $min_below_median_pct is not null and median_days >= $median_min_days
            and below_median_pct >= $min_below_median_pct,
            false
        ) as median_hit
    from measured
)

select * from scored
where case when $require = 'all'
            then ($min_drop_pct is null or drop_hit)
            and ($min_below_median_pct is null or median_hit)
        else drop_hit or median_hit
    end
order by observed_at, offer_id
