-- The alert outbox and the detection watermark, in the working database. Idempotent: run before
-- every use.
create schema if not exists alerts;

create table if not exists alerts.outbox (
    alert_key varchar primary key,     -- rule + offer/group + the observation it is about
    rule varchar not null,             -- drop | new_low | month_end_dip | watch |
    -- workload_cheaper | run_failure
    title varchar not null,
    body varchar not null,             -- plain text: card, vendor, region, CNY and USD, link
    payload json not null,             -- the same facts as data
    created_at timestamptz not null,
    status varchar not null,           -- pending | sent | partial | failed
    attempts integer not null default 0,   -- delivery attempts over all runs
    last_error varchar,                -- why the last attempt failed (no URL credentials)
    sent_at timestamptz,
    delivered_to varchar[] not null default []  -- ids (URL hashes) of channels that have it
);

-- Added by issue 15 (routing, per-channel status); an older outbox gains them here, its rows
-- keep working: a null route is the default channels, a null channel_status shows nothing.
alter table alerts.outbox add column if not exists route varchar[];  -- the rule's channel tags
-- {channel id: {"channel": safe label, "status": "sent" | "failed", "error": why}}
alter table alerts.outbox add column if not exists channel_status json;

create table if not exists alerts.state (
    name varchar primary key,
    value timestamptz,
    updated_at timestamptz not null
);
