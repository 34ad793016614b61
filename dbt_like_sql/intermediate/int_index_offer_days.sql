/* The price index's inputs (docs/price-index.md): one row per counted whole-card offer and local
   day, in the index series it belongs to, with its closing price as listed (the day-on-day
   relatives are taken in it, so exchange rates cannot move them), the same close per GPU-hour
   in the market's currency (the base day's anchor and the listing median), and whether the close
   may carry the index: `fresh` (its last look of the day within stale_after_hours of the local
   day's end) and not `held` (the close is a possible outlier no later look has confirmed,
   marts.held_observations). A series is a card class, a market (china: listed in CNY; world:
   listed in USD; other currencies are in no series), an offer kind and a term (the billing
   period). A curated table's source (no calendar signal) is in no series, nor is a vendor whose
   terms forbid using its prices in an index (spiders/terms.csv: the macro index_use_forbidden).
   pipelines/index/ chains the published index from it. Incremental by day with a lookback of
   the outlier rules' confirm_within_days (intermediate.int_outlier_rules; a test holds the
   header equal): a held close is judged by its own day's market, so a later market no longer
   moves it (since 2026-12-06, issue 45; before, this was rebuilt in full every hour with held
   flags from today's market), but a look within that many days after it can still confirm it
   (marts.held_observations rebuilds those days). */
-- incremental: index_date lookback 7 days
with rules as (
    select stale_after_hours
    from intermediate.int_index_rules
),

settings as (
    select since_day() as since                         -- the first local day rebuilt
),

held as (
    -- the unconfirmed held looks that can close a rebuilt local day: a Beijing day starts on the
    -- UTC day before
    select
        h.offer_id,
        h.observed_at
    from marts.held_observations as h
    cross join settings as s
    where h.observed_date >= s.since - 1 and h.confirmed_at is null
),

classed as (
    select
        d.offer_id,
        d.local_date,
        d.local_time_zone,
        d.vendor,
        d.source,
        d.gpu_model,
        d.offer_kind,
        d.billing_period,
        d.currency,
        d.close_price_amount,
        d.last_observed_at,
        split_part(d.gpu_model, '-', 1) as gpu_family,
        -- the card class: H100 and H800 (the same chip, NVLink cut) share their SXM series; a
        -- PCIe or NVL board is its own; A100 keeps its memory (40 GB and 80 GB rent apart); any
        -- other card is its family (RTX4090 24 GB and 48 GB boards alike)
        case
            when split_part(d.gpu_model, '-', 1) in ('H100', 'H800')
                and d.gpu_model like '%-94GB' then 'H100 NVL'
            when split_part(d.gpu_model, '-', 1) in ('H100', 'H800')
                and d.gpu_variant = 'PCIe' then split_part(d.gpu_model, '-', 1) || ' PCIe'
            when split_part(d.gpu_model, '-', 1) in ('H100', 'H800') then 'H100/H800 SXM'
            when split_part(d.gpu_model, '-', 1) = 'A100' then d.gpu_model
            else split_part(d.gpu_model, '-', 1)
        end as index_card,
        case d.currency when 'CNY' then 'china' when 'USD' then 'world' end as market,
        case d.currency
            when 'CNY' then d.close_price_cny_per_gpu_hour
            when 'USD' then d.close_price_usd_per_gpu_hour
        end as close_price_per_gpu_hour,
        timezone(d.local_time_zone, (d.local_date + 1)::timestamp) as day_end_at
    from intermediate.int_offer_local_daily as d
    cross join settings as st
    where
        d.local_date >= st.since
        and d.counted
        -- no curated table: its dates are edits, not days a price held
        -- (int_sources_without_calendar)
        and d.source not in (select s.source from intermediate.int_sources_without_calendar as s)
        -- no vendor whose terms forbid using its prices in an index (spiders/terms.csv), by the
        -- source's vendor key ('vastai'; an archive's 'cloud-gpus:vastai') or by the vendor an
        -- aggregator's offer names
        and not index_use_forbidden(regexp_replace(d.source, '^[^:]*:', ''), d.vendor)
        and d.gpu_fraction = 1
        and d.currency in ('CNY', 'USD')
        and d.close_price_amount > 0
)

select
    concat_ws('|', c.index_card, c.market, c.offer_kind, c.billing_period)
        as series_id,                                   -- card|market|offer kind|term
    c.index_card,                                       -- H100/H800 SXM, A100-80GB, RTX4090, ...
    c.gpu_family,                                       -- A100, H100, H800, RTX4090, ...
    c.market,                                           -- china (CNY) | world (USD)
    c.currency,                                         -- the market's listed currency
    c.offer_kind,                                       -- on_demand | spot | ...
    c.billing_period as term,                           -- hour | day | month | year
    c.local_date as index_date,                         -- the vendor's calendar day
    c.offer_id,
    c.vendor,
    c.source,
    c.close_price_amount,                               -- the day's close as listed
    c.close_price_per_gpu_hour,                         -- the same close per GPU-hour
    c.last_observed_at,                                 -- the day's last look (UTC)
    c.last_observed_at >= c.day_end_at - to_hours(r.stale_after_hours)
        as fresh,                                       -- last look recent enough to count
    h.offer_id is not null as held                      -- an unconfirmed possible outlier
from classed as c
cross join rules as r
left join held as h
    on c.offer_id = h.offer_id
    and c.last_observed_at = h.observed_at
-- no order by: its readers (pipelines/index/sql/) order what they read, and sorting every
-- offer-day was two thirds of this full rebuild's hour at a year
