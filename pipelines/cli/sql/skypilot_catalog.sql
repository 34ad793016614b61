-- The SkyPilot catalog (vms.csv) rows of every source: one row per source, instance type (sku)
-- and region, from the hourly on-demand and spot offers of marts.latest_prices (export.py names
-- the columns as SkyPilot does). price and spot_price are USD per instance-hour: the listed
-- amount for USD offers, else the USD price per whole-GPU hour x GPUs x fraction (what the
-- listed hourly amount buys). Day, week and month billing and reserved offers have no place in
-- the catalog and are left out. vCPUs and memory are the instance's where its source states them
-- (empty otherwise, as SkyPilot allows).
with hourly as (
    select
        source,
        sku,
        region_code,
        offer_kind,
        gpu_model,
        gpu_count * gpu_fraction as accelerator_count,
        vcpus,
        memory_gib,
        case
            when currency = 'USD' then price_amount
            else price_per_gpu_hour_usd * gpu_count * gpu_fraction
        end as usd_per_instance_hour
    from marts.latest_prices
    where
        billing_period = 'hour' and offer_kind in ('on_demand', 'spot')
        -- not a price held back as a possible outlier: not_held_predicate()
        and {not_held}
)

select
    source,
    sku as instance_type,
    min(gpu_model) as accelerator_name,
    min(accelerator_count)::double as accelerator_count,
    max(vcpus)::double as vcpus,
    max(memory_gib)::double as memory_gib,
    round(min(usd_per_instance_hour) filter (where offer_kind = 'on_demand'), 4)::double
        as price,
    round(min(usd_per_instance_hour) filter (where offer_kind = 'spot'), 4)::double
        as spot_price,
    region_code as region,
    null::varchar as availability_zone
from hourly
group by source, sku, region_code
order by source, instance_type, region
