-- The models, region codes and region groups (province in China, country elsewhere, as in
-- staging.stg_observations) of the latest offers; the caller appends the filter's `where`.
select distinct
    gpu_model,
    region_code,
    case
        when country = 'CN' then coalesce(province_or_state, 'CN') else country
    end as region_group
from marts.latest_prices
