-- Bookkeeping for the models: when each was last built, from which SQL (its sha256), when it
-- was last rebuilt from scratch (the models that read it must then be too), and the runner's
-- setup stamp its stored columns were last checked under (sql_models.run_model).
create schema if not exists raw;
create table if not exists raw.model_state (
    model varchar primary key,
    built_at timestamptz not null
);
alter table raw.model_state add column if not exists sql_sha256 varchar;
alter table raw.model_state add column if not exists reset_at timestamptz;
alter table raw.model_state add column if not exists runner_stamp varchar;
