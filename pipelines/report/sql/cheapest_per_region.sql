-- The cheapest offer per card, offer kind, billing period and region, cheapest first within each
-- card, kind and period (so the first row of each is the cheapest anywhere).
select *
from marts.cheapest_offers
where rank = 1
order by gpu_model, offer_kind, billing_period, price_per_gpu_hour_cny, vendor
