-- What the catalog says before the runner builds a batch of models (model_batch.py), once for
-- the batch: the stamp of the runner's setup (the comment on raw.model_state: its macros and
-- bookkeeping table; null before the first build of this version), whether raw.model_state
-- exists, and every table and view (not DuckDB's own) as '<schema>.<name>'.
select
    (
        select max(t.comment)
        from duckdb_tables() as t
        where
            t.database_name = current_database()
            and t.schema_name = 'raw' and t.table_name = 'model_state'
    ) as runner_stamp,
    (
        select coalesce(list(t.schema_name || '.' || t.table_name), [])
        from duckdb_tables() as t
        where t.database_name = current_database()
    ) as table_names,
    (
        select coalesce(list(v.schema_name || '.' || v.view_name), [])
        from duckdb_views() as v
        where v.database_name = current_database() and not v.internal
    ) as view_names
