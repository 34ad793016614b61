-- The columns of the stored table $schema.$table (in the session's database), in order.
select column_name
from duckdb_columns()
where database_name = current_database() and schema_name = $schema and table_name = $table
order by column_index
