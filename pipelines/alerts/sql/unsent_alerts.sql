-- Every alert still to deliver, oldest first.
select alert_key, title, body, delivered_to, rule, route, channel_status
from alerts.outbox
where status in ('pending', 'failed', 'partial')
order by created_at, alert_key
