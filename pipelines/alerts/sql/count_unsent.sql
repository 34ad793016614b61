-- How many alerts wait in the outbox after a delivery run.
select count(*) as unsent
from alerts.outbox
where status in ('pending', 'failed', 'partial')
