-- An alert every channel it is routed to now has.
update alerts.outbox
set
    status = 'sent',
    attempts = attempts + $tries,
    last_error = null,
    sent_at = now(),
    delivered_to = $delivered_to,
    channel_status = $channel_status
where alert_key = $alert_key
