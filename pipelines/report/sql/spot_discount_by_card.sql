-- Spot discount on one day (parameter), per card; by_sku counts spot offers paired by their SKU.
select
    gpu_model,
    count(distinct spot_offer_id) as pairs,
    count(distinct spot_offer_id) filter (where pairing = 'sku') as by_sku,
    count(distinct vendor) as vendors,
    median(spot_to_on_demand_ratio) as ratio,
    median(spot_discount_pct) as discount,
    min(spot_discount_pct) as low,
    max(spot_discount_pct) as high
from marts.spot_discount
where day = ?
group by gpu_model
order by gpu_model
