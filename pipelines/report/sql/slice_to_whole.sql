-- Slice-to-whole ratio on one day (parameter), per card, variant (? = not stated) and slice.
select
    gpu_model,
    gpu_fraction,
    slice_vram_gb,
    coalesce(gpu_variant, '?') as gpu_variant,
    count(distinct slice_offer_id) as slices,
    count(distinct vendor) as vendors,
    median(slice_to_whole_ratio) as ratio,
    min(slice_to_whole_ratio) as low,
    max(slice_to_whole_ratio) as high,
    median(per_gpu_premium) as premium
from marts.slice_to_whole_ratio
where day = ?
group by all
order by gpu_model, gpu_variant, gpu_fraction, slice_vram_gb
