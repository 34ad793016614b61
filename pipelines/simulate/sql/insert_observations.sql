-- One block of simulated observations: every offer (sim_offers) at every hour of the block
-- (sim_chunk). {only_new} is true when an hour may already be there (append_hour): then an
-- offer's row for an hour already there is skipped, since observations has no primary key
-- (warehouse/db.py says why); false, the filter folds away. By name: a column the simulator
-- does not write (a backfilled row's provenance) is null.
insert into observations by name
select
    to_timestamp(c.observed_s) as observed_at,
    to_timestamp(c.h * 3600) as observed_hour,
    o.source, o.vendor, o.vendor_kind, o.region_code, o.country, o.province_or_state, o.city,
    o.is_tier1_city, o.sku, o.gpu_model, o.gpu_variant, o.gpu_count,
    o.gpu_fraction::decimal(9, 6) as gpu_fraction, o.vram_gb::decimal(9, 2) as vram_gb,
    o.offer_kind, o.billing_period,
    round(c.amount, 6)::decimal(18, 6) as price_amount,
    o.currency,
    -- cny_scale / usd_scale: exchange-rate moves (1 otherwise); the listed amount stays put
    round(round(c.amount, 6) * o.cny_factor * c.cny_scale, 6)::decimal(18, 6)
        as price_per_gpu_hour_cny,
    round(round(c.amount, 6) * o.usd_factor * c.usd_scale, 6)::decimal(18, 6)
        as price_per_gpu_hour_usd,
    o.fx_rate_date::date as fx_rate_date,
    case c.available when 1 then true when 0 then false end as available,
    o.url, o.raw_ref, o.offer_id,
    'sim-' || o.source || '-' || strftime(make_timestamp(c.h * 3600000000), '%Y%m%dT%H')
        as crawl_id,
    o.vcpus::decimal(9, 2) as vcpus,
    o.memory_gib::decimal(12, 2) as memory_gib,
    o.disk_gb::decimal(12, 2) as disk_gb,
    o.reaches_via::varchar as reaches_via,              -- null: direct
    o.local_time_zone::varchar as local_time_zone       -- null: the house rule (staging)
from sim_chunk as c
inner join sim_offers as o on c.oi = o.oi
where
    not {only_new}
    or not exists (
        -- the hours of the chunk bound the scan to the newest row groups
        select 1 from observations as x
        where
            x.observed_hour >= (select to_timestamp(min(k.h) * 3600) from sim_chunk as k)
            and x.observed_hour = to_timestamp(c.h * 3600)
            and x.offer_id = o.offer_id
    )
