-- The latest alerts of the outbox: $status one delivery state (null: every state), $limit rows.
-- Every column: an outbox published before per-channel status has no channel_status yet.
select *
from alerts.outbox
where $status is null or status = $status
order by created_at desc
limit $limit
