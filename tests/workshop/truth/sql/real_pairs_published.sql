/* One row per pair a pairing mart publishes (slice_to_whole_ratio, multi_gpu_discount,
   spot_discount, monthly_vs_hourly_saving) on a published prices.db, with both offers' machines
   per whole-GPU equivalent and SKUs (intermediate.int_offer_daily), its ratio (offer / partner,
   per GPU-equivalent) and the discount the mart states. `pair_rules` is
   intermediate.int_pair_rules as the code states it, registered by real_pairs.py (a database from
   before the rules has none). */
with published as (
    select
        'multi_gpu' as comparison, day, server_offer_id as offer_id,
        single_offer_id as partner_offer_id, server_to_single_ratio as ratio,
        discount_pct
    from marts.multi_gpu_discount
    union all
    select
        'spot' as comparison, day, spot_offer_id as offer_id,
        on_demand_offer_id as partner_offer_id, spot_to_on_demand_ratio as ratio,
        spot_discount_pct as discount_pct
    from marts.spot_discount
    union all
    select
        'slice_to_whole' as comparison, day, slice_offer_id as offer_id,
        whole_offer_id as partner_offer_id, per_gpu_premium as ratio,
        100 * (1 - per_gpu_premium) as discount_pct
    from marts.slice_to_whole_ratio
    union all
    select
        'monthly_vs_hourly' as comparison, day, monthly_offer_id as offer_id,
        hourly_offer_id as partner_offer_id,
        monthly_price_cny_per_gpu_hour / hourly_price_cny_per_gpu_hour as ratio,
        saving_pct as discount_pct
    from marts.monthly_vs_hourly_saving
),

machines as (
    select
        offer_id,
        observed_date,
        sku,
        vcpus / (gpu_count * gpu_fraction) as vcpus_per_gpu,
        memory_gib / (gpu_count * gpu_fraction) as memory_per_gpu,
        disk_gb / (gpu_count * gpu_fraction) as disk_per_gpu
    from intermediate.int_offer_daily
)

select
    p.comparison,
    p.day,
    p.offer_id,
    p.partner_offer_id,
    p.ratio::double as ratio,
    p.discount_pct::double as discount_pct,
    r.ratio_low,
    r.ratio_high,
    p.offer_id = p.partner_offer_id as itself,
    p.ratio not between r.ratio_low and r.ratio_high as out_of_range,
    -- two machines: a stated spec that differs per GPU beyond the rules' tolerance
    coalesce(
        abs(a.vcpus_per_gpu - b.vcpus_per_gpu)
        > r.machine_tolerance * greatest(a.vcpus_per_gpu, b.vcpus_per_gpu)
        or abs(a.memory_per_gpu - b.memory_per_gpu)
        > r.machine_tolerance * greatest(a.memory_per_gpu, b.memory_per_gpu),
        false
    ) as machine_differs,
    -- no stated machine to compare on a side, and not the same SKU either
    (
        a.vcpus_per_gpu is null or b.vcpus_per_gpu is null
        or a.memory_per_gpu is null or b.memory_per_gpu is null
    ) and coalesce(a.sku <> b.sku, true) as machine_unknown
from published as p
inner join pair_rules as r on p.comparison = r.comparison
left join machines as a on p.offer_id = a.offer_id and p.day = a.observed_date
left join machines as b on p.partner_offer_id = b.offer_id and p.day = b.observed_date
