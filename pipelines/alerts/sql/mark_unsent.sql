-- An alert some channel still lacks: $status is 'partial' (some channels have it) or 'failed'
-- when it was tried this time; otherwise (every channel it lacks was down earlier in the run,
-- or none is configured for its route) it keeps its status.
update alerts.outbox
set
    status = case when $tries > 0 then $status else status end,
    attempts = attempts + $tries,
    last_error = $last_error,
    delivered_to = $delivered_to,
    channel_status = $channel_status
where alert_key = $alert_key
