/* Regional pairs: one row per vendor, offer line (card model and variant, GPU count, slice
   fraction, VRAM, offer kind, billing period), configuration, region group (province in China,
   country elsewhere) and UTC day: the vendor's price of that line and configuration in the region
   against the SAME vendor's price of the same line and configuration in the reference (China:
   offers in tier-1 cities; elsewhere: the US) OUTSIDE the region: a region is never its own
   reference (Beijing is priced against Shanghai's and Guangdong's tier-1 offers, the US against
   nothing). Comparing a vendor with itself keeps the vendor mix out of the regional gap: a cheap
   IDC found only in one province, or a dear hyperscaler found only in Beijing, pairs with nothing.
   The configuration (machine_config) is the machine per GPU (vCPUs, memory GiB, disk GB, as the
   offer states them), or, where the source states no machine, the vendor's SKU (its own name for
   one instance type; observations always carry one). Each side's price is
   the median of the vendor's offers of the line there (a vendor's sources count as one vendor).
   A region line that is not paired, or whose ratio lies outside the plausible range
   (intermediate.int_pair_rules), keeps its row with a NULL price_ratio and its held_reason, so
   the marts can say why a region has no discount (marts.held_pairs lists them). */
-- grain: observed_date, vendor, offer_line, machine_config, country, region_group
-- audit: own_reference: list_contains(reference_region_groups, region_group)
-- audit: out_of_range: price_ratio not between ratio_low and ratio_high
-- incremental: observed_date
with rules as (
    select *
    from intermediate.int_pair_rules
    where comparison = 'regional'
),

offers as (
    select
        *,
        case when country = 'CN' then 'CN tier-1 cities' else 'US' end as reference,
        (country = 'CN' and is_tier1_city) or country = 'US' as in_reference,
        case
            when vcpus is not null and memory_gib is not null
                then format(
                    '{} vCPU, {} GiB, {} GB disk per GPU',
                    round(vcpus / (gpu_count * gpu_fraction), 2)::double,
                    round(memory_gib / (gpu_count * gpu_fraction), 2)::double,
                    coalesce(round(disk_gb / (gpu_count * gpu_fraction), 2)::double::varchar, '-')
                )
            else 'sku ' || sku
        end as machine_config
    from intermediate.int_offer_daily
    -- an incremental build pairs only the rebuilt days (since_day(); a full build: every day):
    -- each row depends on its own day only
    where observed_date >= since_day()
        and counted  -- counted once: a non-direct twin of a direct offer is left out
),

regions as (
    select
        observed_date,
        vendor,
        offer_line,
        machine_config,
        country,
        region_group,
        any_value(reference) as reference,
        bool_and(in_reference) as all_in_reference,     -- the region lies in the reference
        any_value(vendor_kind) as vendor_kind,
        any_value(gpu_model) as gpu_model,
        any_value(gpu_variant) as gpu_variant,          -- one value per line (NULL stays NULL)
        any_value(gpu_count) as gpu_count,
        any_value(gpu_fraction) as gpu_fraction,
        any_value(vram_gb) as vram_gb,
        any_value(offer_kind) as offer_kind,
        any_value(billing_period) as billing_period,
        median(close_price_cny_per_gpu_hour) as region_price,
        count(distinct offer_id) as region_offers,
        list(distinct offer_id order by offer_id) as region_offer_ids,
        list(distinct close_price_cny_per_gpu_hour) as region_prices
    from offers
    group by observed_date, vendor, offer_line, machine_config, country, region_group
),

-- the same vendor's line and configuration in the reference, outside the region itself
reference_lines as (
    select
        r.observed_date,
        r.vendor,
        r.offer_line,
        r.machine_config,
        r.country,
        r.region_group,
        median(o.close_price_cny_per_gpu_hour) as reference_price,
        count(distinct o.offer_id) as reference_offers,
        list(distinct o.offer_id order by o.offer_id) as reference_offer_ids,
        list(distinct o.close_price_cny_per_gpu_hour) as reference_prices,
        list(distinct o.region_group order by o.region_group) as reference_region_groups
    from regions as r
    inner join offers as o
        on r.observed_date = o.observed_date
        and r.vendor = o.vendor
        and r.offer_line = o.offer_line
        and r.machine_config = o.machine_config
        and r.reference = o.reference
        and r.region_group <> o.region_group            -- never the region itself
        and o.in_reference
    group by all
),

-- any vendor's offers in the reference, by day, reference and region group: whether a region
-- has a reference other than itself at all
reference_regions as (
    select distinct observed_date, reference, region_group
    from offers
    where in_reference
),

joined as (
    select
        r.*,
        f.reference_price,
        f.reference_offers,
        f.reference_offer_ids,
        f.reference_prices,
        f.reference_region_groups,
        u.ratio_low,
        u.ratio_high,
        r.region_price / nullif(f.reference_price, 0) as measured_ratio,
        r.all_in_reference and not exists (
            select 1
            from reference_regions as g
            where g.observed_date = r.observed_date
                and g.reference = r.reference
                and g.region_group <> r.region_group
        ) as own_reference                              -- the region is the whole reference
    from regions as r
    cross join rules as u
    left join reference_lines as f
        on r.observed_date = f.observed_date
        and r.vendor = f.vendor
        and r.offer_line = f.offer_line
        and r.machine_config = f.machine_config
        and r.country = f.country
        and r.region_group = f.region_group
),

judged as (
    select
        *,
        case
            when own_reference
                then 'the region is the reference itself: no other region of the reference'
            when reference_price is null
                then 'no offer of the vendor''s line and configuration in the reference '
                || 'outside the region'
            when reference_price <= 0 then 'reference price not positive'
            when measured_ratio not between ratio_low and ratio_high
                then format(
                    'ratio {} outside the plausible range {}-{} (intermediate.int_pair_rules)',
                    round(measured_ratio, 4)::double, ratio_low, ratio_high
                )
        end as held_reason
    from joined
)

select
    observed_date,
    vendor,
    vendor_kind,                                        -- idc|marketplace|gpu_cloud|hyperscaler
    offer_line,                                         -- vendor|model|variant|count|fraction|...
    machine_config,                                     -- per GPU, or 'sku ...'
    gpu_model,
    gpu_variant,                                        -- NULL: the listings did not say
    gpu_count,
    gpu_fraction,
    vram_gb,
    offer_kind,
    billing_period,
    country,
    region_group,                                       -- province in China, country elsewhere
    reference,                                          -- 'CN tier-1 cities' | 'US'
    own_reference,                                      -- the region is the whole reference
    region_price::decimal(18, 6)
        as region_price_cny_per_gpu_hour,               -- median of the vendor's line offers here
    reference_price::decimal(18, 6)
        as reference_price_cny_per_gpu_hour,            -- same, in the reference; NULL: none
    measured_ratio::double as measured_ratio,           -- region / reference, held or not
    case when held_reason is null then measured_ratio end::double
        as price_ratio,                                 -- published: 0.8 = 20 % cheaper; NULL: held
    held_reason,                                        -- why no price_ratio; NULL: paired
    ratio_low,                                          -- the plausible range (int_pair_rules)
    ratio_high,
    region_offers,                                      -- the vendor's offers of the line here
    coalesce(reference_offers, 0) as reference_offers,  -- ... and in the reference
    len(region_prices) as distinct_region_prices,       -- copies of one price count once
    -- distinct prices of both sides together (the region's alone when unpaired)
    len(list_distinct(region_prices || coalesce(reference_prices, region_prices)))
        as distinct_offers,
    region_offer_ids,                                   -- the offers behind each side
    reference_offer_ids,
    reference_region_groups                             -- the reference's region groups used
from judged
