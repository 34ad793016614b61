-- Multi-GPU discount on one day (parameter), per card, variant (? = not stated) and server size.
select
    gpu_model,
    server_gpu_count,
    coalesce(gpu_variant, '?') as gpu_variant,
    count(distinct server_offer_id) as lines,
    count(distinct vendor) as vendors,
    median(server_to_single_ratio) as ratio,
    median(discount_pct) as discount
from marts.multi_gpu_discount
where day = ?
group by all
order by gpu_model, gpu_variant, server_gpu_count
