/* Multi-GPU discount: one row per source, vendor, region, card, offer kind, billing period,
   server GPU count (> 1) and day: the cheapest multi-card server's price per GPU-hour against the
   cheapest whole single card of the same model there that day. */
with servers as (
    select
        observed_date,
        source,
        vendor,
        region_code,
        region_group,
        gpu_model,
        offer_kind,
        billing_period,
        gpu_count as server_gpu_count,
        min(close_price_cny_per_gpu_hour) as server_price_cny_per_gpu_hour
    from intermediate.int_offer_daily
    where gpu_fraction = 1 and gpu_count > 1
    group by
        observed_date, source, vendor, region_code, region_group, gpu_model, offer_kind,
        billing_period, gpu_count
)

select
    s.observed_date as day,
    s.source,
    s.vendor,
    s.region_code,
    s.region_group,
    s.gpu_model,
    s.offer_kind,
    s.billing_period,
    s.server_gpu_count,                                 -- whole cards in the server
    s.server_price_cny_per_gpu_hour::decimal(18, 6)
        as server_price_cny_per_gpu_hour,               -- lowest server of that size, per GPU
    c.whole_price_cny_per_gpu_hour::decimal(18, 6)
        as single_price_cny_per_gpu_hour,               -- lowest whole single card
    (s.server_price_cny_per_gpu_hour / c.whole_price_cny_per_gpu_hour)::double
        as server_to_single_ratio,                      -- 0.75 = server at 75 % of n x one card
    (100 * (1 - s.server_price_cny_per_gpu_hour / c.whole_price_cny_per_gpu_hour))::double
        as discount_pct                                 -- negative: the server costs more per GPU
from servers as s
inner join intermediate.int_whole_card_daily as c
    on s.observed_date = c.observed_date
    and s.source = c.source
    and s.vendor = c.vendor
    and s.region_code = c.region_code
    and s.gpu_model = c.gpu_model
    and s.offer_kind = c.offer_kind
    and s.billing_period = c.billing_period
where c.whole_price_cny_per_gpu_hour > 0
order by day, s.gpu_model, s.source, s.region_code, s.offer_kind, s.billing_period,
    s.server_gpu_count
