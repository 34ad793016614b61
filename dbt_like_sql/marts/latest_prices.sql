/* The latest observation of every offer: one row per offer_id, with when it was first and last
   seen. Read from the daily series (its last day's close), not from every observation.
   Incremental by merge: only the days rebuilt (from since_day(), set by the model runner; every
   day in a full build) are read, and each offer seen on them gets its row from its latest day
   there, which is its latest day; its first_seen_at keeps the earlier of the stored and the new
   one. An offer not seen since keeps its row: its days are not rebuilt. The rebuilt days hold
   every offer whose `counted` can flip (an aggregator's offer of a vendor whose own source
   observes the like-for-like offer later the same day, docs/signals.md, "Counted once"): the
   daily series keeps every row of those days current (it reads such an offer's days whole
   rather than folding its new looks in). price_basis and prices_as_of are the offer's own,
   from its latest observation (the snapshot entry, archive version or live answer its price was
   read from); a row from before observations carried them falls back to its source's latest
   crawl's at the time the offer was last seen. */
-- grain: offer_id
-- audit: price_positive: coalesce(price_per_gpu_hour_cny, 0) <= 0
-- audit: seen_in_order: first_seen_at > last_seen_at
-- alias: latest_prices
-- incremental: offer_id by merge
-- merge: first_seen_at least
with first_seen as (
    select
        offer_id,
        min(first_observed_at) as first_seen_at
    from intermediate.int_offer_daily
    where observed_date >= since_day()
    group by offer_id
),

latest_days as (
    select *
    from intermediate.int_offer_daily
    where observed_date >= since_day()
    qualify row_number() over (partition by offer_id order by observed_date desc) = 1
)

select
    d.offer_id,
    d.source,
    d.vendor,
    d.vendor_kind,
    d.gpu_model,
    d.gpu_variant,
    d.gpu_count,
    d.gpu_fraction,
    d.vram_gb,
    d.vcpus,                      -- vCPUs of the instance (null: its source does not state them)
    d.memory_gib,                 -- the instance's memory, GiB (null: not stated)
    d.disk_gb,                    -- the instance's local disk, decimal GB (null: not stated)
    d.offer_kind,
    d.billing_period,
    d.region_code,
    d.country,
    d.province_or_state,
    d.city,
    d.is_tier1_city,
    d.sku,
    d.close_price_amount as price_amount,                   -- as listed, per billing_period
    d.currency,
    d.close_price_cny_per_gpu_hour as price_per_gpu_hour_cny,  -- one whole-GPU equivalent, 1 hour
    d.close_price_usd_per_gpu_hour as price_per_gpu_hour_usd,
    d.close_fx_rate_date as fx_rate_date,
    d.close_available as available,
    d.last_observed_at as last_seen_at,
    f.first_seen_at,
    d.url,
    -- where this price comes from: live | captured | published | undated | illustrative | mixed |
    -- simulated, from the offer's latest observation; null: neither it nor its source says
    coalesce(d.price_basis, b.price_basis) as price_basis,
    -- the date the price held: a published record's, an archive version's, the day a live price
    -- was read; null: no one could date it (undated, illustrative)
    if(d.price_basis is null, b.prices_as_of, d.prices_as_of) as prices_as_of,
    coalesce(  -- the same, in words (pipelines/warehouse/sql/price_basis_macros.sql)
        if(
            d.price_basis is null, b.price_basis_label,
            price_basis_label(d.price_basis, d.prices_as_of)
        ),
        'not stated'
    ) as price_basis_label,
    d.reaches_via,                -- direct, or aggregator | second_path | archive
    -- false: a direct source listed the like-for-like offer that day and is counted instead
    -- (docs/signals.md, "Counted once"); cheapest_offers and every signal skip such rows
    d.counted
from latest_days as d
inner join first_seen as f on d.offer_id = f.offer_id
left join intermediate.int_source_price_basis as b on d.source = b.source
order by d.gpu_model, price_per_gpu_hour_cny
