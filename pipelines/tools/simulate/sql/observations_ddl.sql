-- The DDL of the observations table as ensure_schema created it; the simulator recreates the
-- table without its primary key for the bulk load and adds the key afterwards.
select sql
from duckdb_tables()
where schema_name = 'main' and table_name = 'observations'
