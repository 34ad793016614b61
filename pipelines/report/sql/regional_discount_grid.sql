-- Regional discount of hourly on-demand whole cards on one day (parameter), China first.
select *
from marts.regional_discount
where day = ? and offer_kind = 'on_demand' and billing_period = 'hour'
order by country <> 'CN', country, region_group, gpu_model
