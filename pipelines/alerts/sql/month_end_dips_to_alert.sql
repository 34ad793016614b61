-- Rule `month_end_dip`: the groups marts.month_end_dip_alerts says to alert about.
select *
from marts.month_end_dip_alerts
order by source, gpu_model, region_code, offer_kind
