-- Every model's build as the runner recorded it in database $db (raw.model_state): when it was
-- last built, when last rebuilt from scratch, from which SQL; as text in UTC, the form a
-- generation's state file keeps (pipelines/generations.py compares the two). The catalog is quoted:
-- a copy's file name (.prices-a.db.<pid>.tmp) gives it dots.
select
    m.model,
    strftime(timezone('UTC', m.built_at), '%Y-%m-%dT%H:%M:%S.%f+00:00') as built_at,
    strftime(timezone('UTC', m.reset_at), '%Y-%m-%dT%H:%M:%S.%f+00:00') as reset_at,
    m.sql_sha256
from "{db}".raw.model_state as m  -- noqa: RF06
order by m.model
