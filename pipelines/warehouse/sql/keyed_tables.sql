-- Tables with a primary key, as (schema, table): the history tables of an older version had one.
select distinct
    schema_name,
    table_name
from duckdb_constraints()
where constraint_type = 'PRIMARY KEY' and database_name = current_database()
