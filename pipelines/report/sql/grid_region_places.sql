-- The places behind each non-Chinese row of the regional grid on one day (parameter): outside
-- China the mart groups a country's offers into one row, so the grid names the states, cities or
-- vendor regions it covers (as the offers state them), most offers first.
select
    country,
    region_group,
    list(place order by offers desc, place asc) as places
from (
    select
        country,
        region_group,
        coalesce(province_or_state, city, region_code) as place,
        count(distinct offer_id) as offers
    from intermediate.int_offer_daily
    where
        observed_date = ? and country <> 'CN' and billing_period = 'hour'
        and offer_kind = 'on_demand' and gpu_fraction = 1
    group by country, region_group, place
) as place_offers
group by country, region_group
