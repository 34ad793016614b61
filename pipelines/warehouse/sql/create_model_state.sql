-- Bookkeeping for incremental models: when each was last built.
create table if not exists raw.model_state (
    model varchar primary key,
    built_at timestamptz not null
)
