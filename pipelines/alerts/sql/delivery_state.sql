-- The delivery state of one alert.
select status, delivered_to, route, channel_status
from alerts.outbox
where alert_key = $alert_key
