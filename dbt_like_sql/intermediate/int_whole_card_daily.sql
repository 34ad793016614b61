/* The cheapest whole single card per day, source, vendor, region, card, offer kind and billing
   period: the reference slices and multi-GPU servers are compared with. */
select
    observed_date,
    source,
    vendor,
    region_code,
    gpu_model,
    offer_kind,
    billing_period,
    min(close_price_cny_per_gpu_hour) as whole_price_cny_per_gpu_hour  -- = the instance price
from intermediate.int_offer_daily
where gpu_fraction = 1 and gpu_count = 1
group by observed_date, source, vendor, region_code, gpu_model, offer_kind, billing_period
