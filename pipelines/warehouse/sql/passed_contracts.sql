-- The models whose last contract check passed: their SQL's sha256 and when it ran.
select
    model,
    sql_sha256,
    checked_at
from raw.model_contracts
where passed
