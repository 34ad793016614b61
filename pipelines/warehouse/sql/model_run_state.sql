-- What the runner needs before building the model $schema.$table: the time its build starts,
-- its last build's state (NULL when never built) and whether its table exists, in one query.
select
    now() as started,
    (
        select { 'built_at': built_at, 'sql_sha256': sql_sha256, 'reset_at': reset_at }
        from raw.model_state
        where model = $schema || '.' || $table
    ) as state,
    exists(
        select 1
        from duckdb_tables()
        where database_name = current_database() and schema_name = $schema
            and table_name = $table
    ) as table_exists
