-- Monthly package saving on one day (parameter), per card.
select
    gpu_model,
    count(distinct monthly_offer_id) as lines,
    count(distinct vendor) as vendors,
    median(saving_pct) as saving,
    min(saving_pct) as low,
    max(saving_pct) as high
from marts.monthly_vs_hourly_saving
where day = ?
group by gpu_model
order by gpu_model
