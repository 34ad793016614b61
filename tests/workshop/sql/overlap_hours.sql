-- Observations per UTC hour (the overlap probe: each run observes its own hour).
select
    strftime(timezone('UTC', observed_hour), '%Y-%m-%dT%H') as observed_hour_utc,
    count(*) as observations
from observations
group by 1
order by 1
