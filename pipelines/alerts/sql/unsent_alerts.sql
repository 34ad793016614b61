-- Every alert still to deliver, oldest first.
select alert_key, title, body, delivered_to, rule
from alerts.outbox
where status in ('pending', 'failed')
order by created_at, alert_key
