-- The batch as the expectations read it: numbers as doubles, and whether each slice's price per
-- whole-GPU equivalent is at least $min_slice_share of the same vendor's whole card (same card,
-- region, kind and period).
with whole as (
    select
        source, gpu_model, region_code, offer_kind, billing_period,
        min(price_per_gpu_hour_cny) as whole_per_gpu_hour
    from observation_batch
    where gpu_fraction = 1 and gpu_count = 1
    group by all
)

select
    b.* replace (
        b.gpu_fraction::double as gpu_fraction,
        b.vram_gb::double as vram_gb,
        b.price_amount::double as price_amount,
        b.price_per_gpu_hour_cny::double as price_per_gpu_hour_cny,
        b.price_per_gpu_hour_usd::double as price_per_gpu_hour_usd,
        b.vcpus::double as vcpus,
        b.memory_gib::double as memory_gib,
        b.disk_gb::double as disk_gb
    ),
    b.gpu_fraction = 1
    or w.whole_per_gpu_hour is null
    or b.price_per_gpu_hour_cny >= $min_slice_share * w.whole_per_gpu_hour
        as slice_price_plausible
from observation_batch as b
left join whole as w
    on b.source = w.source
    and b.gpu_model = w.gpu_model
    and b.region_code = w.region_code
    and b.offer_kind = w.offer_kind
    and b.billing_period = w.billing_period
