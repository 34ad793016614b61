-- An alert every channel now has.
update alerts.outbox
set status = 'sent',
    attempts = attempts + $tries,
    last_error = null,
    sent_at = now(),
    delivered_to = $delivered_to
where alert_key = $alert_key
