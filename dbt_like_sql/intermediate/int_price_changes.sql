/* Price-change events: one row per observation whose listed price or availability differs from
   the same offer's previous observation. Prices are compared as listed (`price_amount` in the
   offer's own currency): an exchange-rate move alone changes the CNY figures beside it but is not
   a price change. A missing observation (a failed crawl) is not a change.
   Incremental: only observations from the rebuilt days on are sequenced, each offer's earlier
   state coming from its last daily close before them (since_day(), set by the model runner;
   in a full build or a plain DuckDB shell, 0001-01-01: everything is sequenced), which
   intermediate.int_offer_closes keeps per offer: no hourly update searches every offer-day. */
-- incremental: observed_date
with before as (
    -- each offer's last known state before the rebuilt days: the day before its last one (in
    -- intermediate.int_offer_closes), when that is before them and its last one is not
    select
        c.offer_id,
        c.previous_close.observed_at,
        c.previous_close.price_amount,
        c.previous_close.price_per_gpu_hour_cny,
        c.previous_close.available
    from intermediate.int_offer_closes as c
    where
        c.last_close.observed_date >= since_day()
        and c.previous_close.observed_date < since_day()
    union all
    -- an offer seen on two rebuilt days or more (a late crawl, a catch-up; never within one
    -- day): its last day before them, searched in the daily series of these offers alone
    select
        d.offer_id,
        max(d.last_observed_at) as observed_at,
        arg_max(d.close_price_amount, d.observed_date) as price_amount,
        arg_max(d.close_price_cny_per_gpu_hour, d.observed_date) as price_per_gpu_hour_cny,
        arg_max_null(d.close_available, d.observed_date) as available
    from intermediate.int_offer_daily as d
    semi join intermediate.int_offer_closes as c
        on
        d.offer_id = c.offer_id
        and c.previous_close.observed_date >= since_day()
    where d.observed_date < since_day()
    group by d.offer_id
),

recent as (
    select
        offer_id, source, vendor, gpu_model, gpu_fraction, region_code, region_group, offer_kind,
        billing_period, sku, observed_at, observed_date, price_amount, currency,
        price_per_gpu_hour_cny, available
    from staging.stg_observations
    -- observed_hour is stored: older row groups are skipped by their min/max
    where
        observed_hour >= since_hour(0)
),

sequenced_keys as (
    -- the window sorts only the columns it compares (the rebuilt days' rows, every hour: half
    -- the model's time at 20,000 offers when it carried every column); the other columns join
    -- back for the changes alone, by (offer_id, observed_at): one observation per offer and hour
    select
        r.offer_id,
        r.observed_at,
        r.price_amount,
        r.available,
        coalesce(lag(r.price_amount) over offer_history, b.price_amount)
            as previous_price_amount,
        coalesce(lag(r.price_per_gpu_hour_cny) over offer_history, b.price_per_gpu_hour_cny)
            as previous_price_cny_per_gpu_hour,
        case
            when lag(r.observed_at) over offer_history is null then b.available
            else lag(r.available) over offer_history
        end as previous_available,
        coalesce(lag(r.observed_at) over offer_history, b.observed_at) as previous_observed_at
    from (
        select offer_id, observed_at, price_amount, price_per_gpu_hour_cny, available
        from staging.stg_observations
        where observed_hour >= since_hour(0)
    ) as r
    left join before as b on r.offer_id = b.offer_id
    window offer_history as (partition by r.offer_id order by r.observed_at)
    qualify previous_observed_at is not null
        and (
            r.price_amount <> previous_price_amount
            or r.available is distinct from previous_available
        )
),

sequenced as (
    select
        r.*,
        k.previous_price_amount,
        k.previous_price_cny_per_gpu_hour,
        k.previous_available,
        k.previous_observed_at
    from sequenced_keys as k
    inner join recent as r on k.offer_id = r.offer_id and k.observed_at = r.observed_at
)

select
    offer_id,
    source,
    vendor,
    gpu_model,
    gpu_fraction,
    region_code,
    region_group,
    offer_kind,
    billing_period,
    sku,
    observed_at,
    observed_date,                                      -- UTC day of the observation
    currency,                                           -- the listed currency
    previous_price_amount,                              -- as listed, per billing period
    price_amount,
    round(100 * (price_amount - previous_price_amount) / previous_price_amount, 4)
        as price_change_pct,                            -- in the listed currency
    price_per_gpu_hour_cny,                             -- CNY beside it (moves with the rate)
    previous_price_cny_per_gpu_hour,
    price_per_gpu_hour_cny - previous_price_cny_per_gpu_hour
        as price_change_cny_per_gpu_hour,
    round(
        100 * (price_per_gpu_hour_cny - previous_price_cny_per_gpu_hour)
        / previous_price_cny_per_gpu_hour, 4
    ) as price_change_pct_cny,
    available,
    previous_available,
    previous_observed_at,
    case
        when price_amount <> previous_price_amount then 'price'
        else 'availability'
    end as change_kind                                  -- 'price': the listed amount changed
from sequenced   -- the changes alone (sequenced_keys' qualify)
