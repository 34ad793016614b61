-- The step's contract checks (contract_scope.record_checks), one row per model: its SQL's sha256,
-- when (every check of the step at the batch's build time), passed. One statement for the step:
-- $1, $2 and $4 are lists in step, unnested side by side (a statement per model was 4 ms each).
insert or replace into raw.model_contracts (model, sql_sha256, checked_at, passed)
select
    unnest($1::varchar[]) as model_name,
    unnest($2::varchar[]) as sql_sha256,
    $3::timestamptz as checked_at,
    unnest($4::boolean[]) as passed
