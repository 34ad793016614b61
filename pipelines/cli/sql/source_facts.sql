-- Per source, what its observations hold: the cards, the kind/period pairs, how many regions.
select
    source,
    string_agg(distinct gpu_model, ' ' order by gpu_model) as cards,
    string_agg(
        distinct offer_kind || '/' || billing_period, ' '
        order by offer_kind || '/' || billing_period
    ) as kinds,
    count(distinct region_code) as regions
from observations
group by source
