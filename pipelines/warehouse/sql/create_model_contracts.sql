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
