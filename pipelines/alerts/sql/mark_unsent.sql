-- An alert some channel still lacks: 'failed' when it was tried this time, otherwise (every
-- channel it lacks was down earlier in the run) it keeps its status.
update alerts.outbox
set status = case when $tries > 0 then 'failed' else status end,
    attempts = attempts + $tries,
    last_error = $last_error,
    delivered_to = $delivered_to
where alert_key = $alert_key
