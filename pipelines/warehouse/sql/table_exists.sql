-- 1 when the table $schema.$table exists in the session's database, else 0.
select count(*)
from duckdb_tables()
where database_name = current_database() and schema_name = $schema and table_name = $table
