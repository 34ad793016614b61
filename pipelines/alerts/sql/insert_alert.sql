-- One alert into the outbox; an existing key is left alone, so a re-run adds nothing.
-- Returns the key when the row is new.
insert into alerts.outbox (alert_key, rule, title, body, payload, created_at, status, route)
values ($alert_key, $rule, $title, $body, $payload, now(), 'pending', $route)
on conflict (alert_key) do nothing
returning alert_key
