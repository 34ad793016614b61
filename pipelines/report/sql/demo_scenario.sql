-- The latest simulation written into this database (gpuprices demo or simulate): the banner.
select start_at, days, every_hours, offers, effects
from truth.scenario
order by created_at desc
limit 1
