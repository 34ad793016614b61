/* Observations with the fields every signal derives: card family, UTC day and month, the vendor's
   local calendar (time zone, local day and month), the region group signals compare (province in
   China, country elsewhere), the instance's own hourly price, and the offer line (what an offer
   is, apart from where and at what price) that like-for-like comparisons pair on.
   Only the observations a page may show (staging.stg_shown_observations: no modeled price the
   run did not opt in to).
   Counted once: `counted` is the one home of the rule (docs/signals.md, "Counted once"). An
   observation its source reached directly (reaches_via 'direct', the vendor's own prices) always
   counts; a template's (reaches_via 'template': a placeholder source with no real operator
   behind it, spiders/vendors/idc_tables.toml `template = true`) never does; one reached another
   way (an aggregator, a second path, an archive) counts only when no
   direct source observed the like-for-like offer the same UTC day: the same vendor, card
   (gpu_model, gpu_variant: a variant one side does not state matches any), gpu_count,
   gpu_fraction, offer_kind, billing_period and country. Every model that counts offers reads
   only counted rows; latest_prices and price_history show every row, with reaches_via and
   counted. The day is the UTC day because the incremental models rebuild by UTC day (each
   new observation's day is rebuilt, so a flag it flips is rebuilt with it); direct observations
   are read from the same first day as the readers (since_hour(1): a day before the first day
   rebuilt; a full build reads all). */
-- materialized: view
with others as (
    -- the rows reached another way (an aggregator, a second path, an archive): the only ones
    -- that look for a direct twin. The readers' own since_hour filter does not reach past that
    -- search: stated here, or an hourly update scans every archived row of the history.
    select o.*
    from staging.stg_shown_observations as o
    where
        o.reaches_via not in ('direct', 'template')
        and o.observed_hour >= since_hour(1)
),

direct as (
    -- the like-for-like offers some direct source observed, per UTC day; only of the vendors and
    -- cards the other rows name (a semi join on them), so the search costs nothing when no row
    -- of the days read was reached another way, and little when a few were
    select distinct
        d.vendor,
        d.gpu_model,
        d.gpu_variant,
        d.gpu_count,
        d.gpu_fraction,
        d.offer_kind,
        d.billing_period,
        d.country,
        timezone('UTC', d.observed_at)::date as observed_date
    from staging.stg_shown_observations as d
    semi join others as x on d.vendor = x.vendor and d.gpu_model = x.gpu_model
    where
        coalesce(d.reaches_via, 'direct') = 'direct'
        and d.observed_hour >= since_hour(1)
),

reached as (
    -- a direct observation always counts and a template's never does: only the others look
    -- for a direct twin, so a reader pays for the search on those rows alone
    select
        o.* replace ('direct' as reaches_via),
        true as counted
    from staging.stg_shown_observations as o
    where coalesce(o.reaches_via, 'direct') = 'direct'
    union all
    select
        o.*,
        false as counted
    from staging.stg_shown_observations as o
    where o.reaches_via = 'template'
    union all
    select
        o.*,
        not exists (
            select 1
            from direct as d
            where
                d.vendor = o.vendor
                and d.gpu_model = o.gpu_model
                and (
                    d.gpu_variant = o.gpu_variant
                    or d.gpu_variant is null
                    or o.gpu_variant is null
                )
                and d.gpu_count = o.gpu_count
                and d.gpu_fraction = o.gpu_fraction
                and d.offer_kind = o.offer_kind
                and d.billing_period = o.billing_period
                and d.country = o.country
                and d.observed_date = timezone('UTC', o.observed_at)::date
        ) as counted
    from others as o
),

zoned as (
    select
        -- The vendor's billing calendar, as normalization wrote it (spiders/parsing/calendars.py:
        -- the spider's local_time_zone, Beijing time for an offer in China); rows from before
        -- the column get the same rule here (tests/simulate/test_time_effects.py holds this copy
        -- to it): Beijing time in China and for a Chinese vendor's source (named *_cn), UTC
        -- elsewhere. Zones must be UTC or east of it: the incremental local-day models rebuild
        -- from the UTC day of the new observations.
        o.* replace (
            coalesce(
                o.local_time_zone,
                case
                    when o.country = 'CN' or o.source like '%\_cn' escape '\'
                        then 'Asia/Shanghai'
                    else 'UTC'
                end
            ) as local_time_zone
        )
    from reached as o
)

select
    -- every column of observations passes through, however many it has (hence the noqa)
    z.*,  -- noqa: AM04
    split_part(z.gpu_model, '-', 1) as gpu_family,      -- A100, H100, H800, RTX4090, RTX4090D
    -- the UTC day counted from the epoch, not by a zone look-up per row (every observation is
    -- after 1970, where `//` floors); a UTC vendor's local day is its UTC day, so only the other
    -- zones are looked up. The later days name the earlier ones by their alias (DuckDB's
    -- lateral column aliases), not through a CTE and an `exclude`: a copied database writes an
    -- exclude list back in another order, and the published catalog would differ from this one.
    date '1970-01-01' + (epoch_us(z.observed_at) // 86400000000)::integer as observed_date,
    date_trunc('month', observed_date)::date as observed_month,  -- noqa: RF02
    if(
        z.local_time_zone = 'UTC', observed_date,  -- noqa: RF02
        timezone(z.local_time_zone, z.observed_at)::date
    ) as local_date,
    date_trunc('month', local_date)::date as local_month,  -- noqa: RF02
    case when z.country = 'CN' then coalesce(z.province_or_state, 'CN') else z.country end
        as region_group,
    z.price_per_gpu_hour_cny * z.gpu_count * z.gpu_fraction as instance_price_cny_per_hour,
    -- The offer line: the same vendor's same thing, wherever and whenever it is listed.
    concat_ws(
        '|', z.vendor, z.gpu_model, coalesce(z.gpu_variant, '-'), z.gpu_count,
        z.gpu_fraction::double, z.vram_gb::double, z.offer_kind, z.billing_period
    ) as offer_line
from zoned as z
