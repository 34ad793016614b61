/* Observations with the fields every signal derives: card family, UTC day and month, the region
   group signals compare (province in China, country elsewhere), the instance's own hourly price. */
-- materialized: view
select
    o.*,
    split_part(o.gpu_model, '-', 1) as gpu_family,                 -- A100, H100, H800, RTX4090, RTX4090D
    timezone('UTC', o.observed_at)::date as observed_date,
    date_trunc('month', timezone('UTC', o.observed_at))::date as observed_month,
    case when o.country = 'CN' then coalesce(o.province_or_state, 'CN') else o.country end
        as region_group,
    o.price_per_gpu_hour_cny * o.gpu_count * o.gpu_fraction as instance_price_cny_per_hour
from observations as o
