-- What the catalog says before the runner builds the model $schema.$table, in one scan of it:
-- the stamp of the runner's setup (the comment on raw.model_state: its macros and bookkeeping
-- table; null before the first build of this version) and whether the model's table exists.
select
    max(t.comment) filter (
        where t.schema_name = 'raw' and t.table_name = 'model_state'
    ) as runner_stamp,
    coalesce(bool_or(t.schema_name = $schema and t.table_name = $table), false) as table_exists
from duckdb_tables() as t
where t.database_name = current_database()
