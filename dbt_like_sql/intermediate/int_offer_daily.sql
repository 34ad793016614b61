/* One row per offer per UTC day: its closing and lowest price per GPU-hour, the instance's closing
   hourly price, whether it was available, the machine it comes with, and how often it was
   seen. The daily series signals use; `offer_line` is what like-for-like comparisons pair on.
   Folded: an hourly update reads only the looks since the first new hour (fold_hour()) and folds
   each offer-day's new row into its stored one by the `-- merge:` rules below (every look folded
   comes after every stored one: the row's first new look after the stored last), instead of
   reading the whole day of every offer again; the days of the offers refolded_offers() names
   (an old look in the new hours, a look whose `counted` can flip) are read whole and replace
   their rows. Equal to a full build (tests/sql/test_incremental_marts.py). */
-- incremental: observed_date
-- fold: offer_id, observed_date when n.first_observed_at > o.last_observed_at
-- merge: counted = n.counted and o.counted
-- merge: close_price_cny_per_gpu_hour = coalesce(n.close_price_cny_per_gpu_hour,
--    o.close_price_cny_per_gpu_hour)
-- merge: low_price_cny_per_gpu_hour least
-- merge: close_instance_price_cny_per_hour = coalesce(n.close_instance_price_cny_per_hour,
--    o.close_instance_price_cny_per_hour)
-- merge: close_price_amount = coalesce(n.close_price_amount, o.close_price_amount)
-- merge: close_price_usd_per_gpu_hour = coalesce(n.close_price_usd_per_gpu_hour,
--    o.close_price_usd_per_gpu_hour)
-- merge: close_fx_rate_date = coalesce(n.close_fx_rate_date, o.close_fx_rate_date)
-- merge: available = n.available or o.available
-- merge: first_observed_at least
-- merge: last_observed_at greatest
-- merge: url = coalesce(n.url, o.url)
-- merge: vcpus = coalesce(n.vcpus, o.vcpus)
-- merge: memory_gib = coalesce(n.memory_gib, o.memory_gib)
-- merge: disk_gb = coalesce(n.disk_gb, o.disk_gb)
-- merge: observations = n.observations + o.observations
with refolded as (
    select r.offer_id from refolded_offers(since_hour(0)) as r
),

looks as (
    -- the looks since the first new hour of the offers folded (every look of the days
    -- read in a rebuild from a day or a full build: nothing is refolded then) ...
    select s.*
    from staging.stg_observations as s
    anti join refolded as r on s.offer_id = r.offer_id
    where s.observed_hour >= since_hour(0) and s.observed_hour >= fold_hour()
    union all
    -- ... and, when folding, the whole rebuilt days of the others
    select s.*
    from staging.stg_observations as s
    semi join refolded as r on s.offer_id = r.offer_id
    where folding() and s.observed_hour >= since_hour(0)
)

select
    offer_id,
    observed_date,
    any_value(observed_month) as observed_month,
    any_value(source) as source,
    any_value(vendor) as vendor,
    any_value(vendor_kind) as vendor_kind,
    any_value(reaches_via) as reaches_via,          -- direct | aggregator | second_path | ...
    bool_and(counted) as counted,                   -- counted once (staging.stg_observations)
    any_value(region_code) as region_code,
    any_value(country) as country,
    any_value(province_or_state) as province_or_state,
    any_value(city) as city,
    any_value(is_tier1_city) as is_tier1_city,
    any_value(region_group) as region_group,
    any_value(sku) as sku,
    any_value(gpu_model) as gpu_model,
    any_value(gpu_family) as gpu_family,
    any_value(gpu_variant) as gpu_variant,
    any_value(gpu_count) as gpu_count,
    any_value(gpu_fraction) as gpu_fraction,
    any_value(vram_gb) as vram_gb,
    any_value(offer_kind) as offer_kind,
    any_value(billing_period) as billing_period,
    any_value(offer_line) as offer_line,            -- the same vendor's same thing anywhere
    any_value(local_time_zone) as local_time_zone,  -- vendor's calendar: Asia/Shanghai or UTC
    arg_max(price_per_gpu_hour_cny, observed_at)
        as close_price_cny_per_gpu_hour,                -- last of the day
    min(price_per_gpu_hour_cny) as low_price_cny_per_gpu_hour,
    arg_max(instance_price_cny_per_hour, observed_at) as close_instance_price_cny_per_hour,
    arg_max(price_amount, observed_at) as close_price_amount,                       -- as listed
    any_value(currency) as currency,
    arg_max(price_per_gpu_hour_usd, observed_at) as close_price_usd_per_gpu_hour,
    arg_max(fx_rate_date, observed_at) as close_fx_rate_date,
    arg_max_null(available, observed_at) as close_available, -- stock at the last look (null kept)
    bool_or(coalesce(available, true)) as available,        -- unknown stock counts as listed
    min(observed_at) as first_observed_at,
    max(observed_at) as last_observed_at,
    arg_max(url, observed_at) as url,
    -- where the day's last price comes from (spiders/price_basis.py) and the date it held; null in
    -- rows from before the columns
    arg_max_null(price_basis, observed_at) as price_basis,
    arg_max_null(prices_as_of, observed_at) as prices_as_of,
    arg_max(vcpus, observed_at) as vcpus,  -- vCPUs of the instance (null: not stated)
    arg_max(memory_gib, observed_at) as memory_gib,  -- the instance's memory, GiB (null: none)
    arg_max(disk_gb, observed_at) as disk_gb,  -- its local disk, decimal GB (null: not stated)
    count(*) as observations
-- An incremental build reads only the rebuilt days: observed_hour is stored, so DuckDB skips the
-- older row groups by their min/max (since_hour(0): the beginning of time in a full build).
from looks
group by offer_id, observed_date
-- stored in day order (a full build too; incremental builds append days), so that the models
-- reading only the rebuilt days (observed_date >= since) skip the older row groups
order by observed_date, offer_id
