-- Each model's last contract check as the models step ran it (contract_scope.py): under which
-- SQL (its sha256, so its audits), when (the build time of the step's batch), and whether it
-- passed. An hourly check reads only the rebuilt rows when the last one passed.
create schema if not exists raw;
create table if not exists raw.model_contracts (
    model varchar primary key,
    sql_sha256 varchar not null,
    checked_at timestamptz not null,
    passed boolean not null
);
comment on table raw.model_contracts is
'Each model''s last contract check: under which SQL, when, whether it passed.';
comment on column raw.model_contracts.model is 'The model checked, as schema.table.';
comment on column raw.model_contracts.sql_sha256 is
'The sha256 of the model''s SQL (its header holds the audits).';
comment on column raw.model_contracts.checked_at is
'When the check ran: the build time of the step''s models.';
comment on column raw.model_contracts.passed is 'True: the grain and every audit held.';
