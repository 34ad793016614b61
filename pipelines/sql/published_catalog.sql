-- Everything of database $db that a reader sees besides the rows: schemas, tables (with their
-- constraints), columns, views, macros, indexes, sequences, types, and every comment. A generation
-- is brought up to date in place only while this is the same in it as in the working database
-- (pipelines/generations.py); any difference (a migration, a changed view or macro, a new comment)
-- publishes a whole copy instead. Internal tables are left out by the caller.
select
    'schema' as kind,
    s.schema_name as object_name,
    coalesce(s.comment, '') as definition
from duckdb_schemas() as s
where s.database_name = $db and not s.internal
union all
select
    'table' as kind,
    t.schema_name || '.' || t.table_name as object_name,
    coalesce(t.comment, '') || ' ' || coalesce(t.sql, '') as definition
from duckdb_tables() as t
where t.database_name = $db and not t.internal and not t.temporary
union all
select
    'column' as kind,
    c.schema_name || '.' || c.table_name as object_name,
    c.column_index::varchar || ' ' || c.column_name || ' ' || c.data_type || ' '
    || coalesce(c.comment, '') as definition
from duckdb_columns() as c
where c.database_name = $db and not c.internal
union all
select
    'view' as kind,
    v.schema_name || '.' || v.view_name as object_name,
    coalesce(v.comment, '') || ' ' || coalesce(v.sql, '') as definition
from duckdb_views() as v
where v.database_name = $db and not v.internal and not v.temporary
union all
select
    'macro' as kind,
    f.schema_name || '.' || f.function_name as object_name,
    f.function_type || ' ' || coalesce(f.parameters::varchar, '') || ' '
    || coalesce(f.macro_definition, '') || ' ' || coalesce(f.comment, '') as definition
from duckdb_functions() as f
where f.database_name = $db and not f.internal
union all
select
    'index' as kind,
    i.schema_name || '.' || i.table_name as object_name,
    coalesce(i.sql, '') as definition
from duckdb_indexes() as i
where i.database_name = $db
union all
select
    'sequence' as kind,
    q.schema_name || '.' || q.sequence_name as object_name,
    coalesce(q.last_value::varchar, '') as definition
from duckdb_sequences() as q
where q.database_name = $db and not q.temporary
union all
select
    'type' as kind,
    y.schema_name || '.' || y.type_name as object_name,
    coalesce(y.logical_type, '') as definition
from duckdb_types() as y
where y.database_name = $db and not y.internal
order by kind, object_name, definition
