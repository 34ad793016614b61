-- The latest alerts of the outbox: $status one delivery state (null: every state), $limit rows.
select created_at, rule, title, status, attempts, last_error
from alerts.outbox
where $status is null or status = $status
order by created_at desc
limit $limit
