-- What the runner needs before building the model $model: the time its build starts, its last
-- build's state (NULL when never built) and how many of the models it reads ($reads) were
-- rebuilt from scratch after that build (it then holds rows computed from their old ones), in
-- one query.
with state as (
    select s.built_at, s.sql_sha256, s.reset_at, s.runner_stamp
    from raw.model_state as s
    where s.model = $model
)

select
    now() as started,
    (
        select
            {
                'built_at': s.built_at, 'sql_sha256': s.sql_sha256, 'reset_at': s.reset_at,
                'runner_stamp': s.runner_stamp
            }
        from state as s
    ) as state,
    (
        select count(*)
        from raw.model_state as m, state as s
        where list_contains($reads::varchar[], m.model) and m.reset_at > s.built_at
    ) as upstream_resets
