-- What the runner needs before building a model: the time its build starts and every model's
-- last build (none before the first), one row each: the runner picks the model's own and
-- compares the reset times of the models it reads with its build time, so that a plain scan of
-- this small table is the whole query.
select
    n.started,
    s.model,
    s.built_at,
    s.sql_sha256,
    s.reset_at,
    s.runner_stamp
from (select now() as started) as n
left join raw.model_state as s on true
