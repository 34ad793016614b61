-- One model's contract check (contract_scope.record_checks): its SQL's sha256, when, passed.
insert or replace into raw.model_contracts (model, sql_sha256, checked_at, passed)
values ($1, $2, $3, $4)
