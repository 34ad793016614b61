-- Bookkeeping for the models: when each was last built, from which SQL (its sha256), and when
-- it was last rebuilt from scratch (the models that read it must then be too).
create table if not exists raw.model_state (
    model varchar primary key,
    built_at timestamptz not null
);
alter table raw.model_state add column if not exists sql_sha256 varchar;
alter table raw.model_state add column if not exists reset_at timestamptz;
