/* Price-change events: one row per observation whose price or availability differs from the same
   offer's previous observation. A missing observation (a failed crawl) is not a change.
   Incremental: only observations from the rebuilt days on are sequenced, each offer's earlier
   state coming from its last daily close before them (getvariable('since') is set by the model
   runner; unset, as in a full build or a plain DuckDB shell, everything is sequenced). */
-- incremental: observed_date
with since as (
    select coalesce(getvariable('since')::date, date '0001-01-01') as day
), before as (
    -- each offer's last known state before the rebuilt days
    select
        offer_id,
        max(last_observed_at) as observed_at,
        arg_max(close_price_cny_per_gpu_hour, observed_date) as price_per_gpu_hour_cny,
        arg_max_null(close_available, observed_date) as available
    from intermediate.int_offer_daily
    where observed_date < (select day from since)
    group by offer_id
), recent as (
    select
        offer_id, source, vendor, gpu_model, gpu_fraction, region_code, region_group, offer_kind,
        billing_period, sku, observed_at, observed_date, price_per_gpu_hour_cny, available
    from staging.stg_observations
    -- observed_hour is stored: older row groups are skipped by their min/max
    where observed_hour >= coalesce(getvariable('since')::timestamptz,
                                    timestamptz '0001-01-01 00:00:00+00')
), sequenced as (
    select
        r.*,
        coalesce(lag(r.price_per_gpu_hour_cny) over offer_history, b.price_per_gpu_hour_cny)
            as previous_price_cny_per_gpu_hour,
        case when lag(r.observed_at) over offer_history is null then b.available
             else lag(r.available) over offer_history end as previous_available,
        coalesce(lag(r.observed_at) over offer_history, b.observed_at) as previous_observed_at
    from recent as r
    left join before as b using (offer_id)
    window offer_history as (partition by r.offer_id order by r.observed_at)
)
select
    *,
    price_per_gpu_hour_cny - previous_price_cny_per_gpu_hour as price_change_cny_per_gpu_hour,
    round(100 * (price_per_gpu_hour_cny - previous_price_cny_per_gpu_hour)
          / previous_price_cny_per_gpu_hour, 4) as price_change_pct,
    case
        when price_per_gpu_hour_cny <> previous_price_cny_per_gpu_hour then 'price'
        else 'availability'
    end as change_kind
from sequenced
where previous_observed_at is not null
  and (price_per_gpu_hour_cny <> previous_price_cny_per_gpu_hour
       or available is distinct from previous_available)
