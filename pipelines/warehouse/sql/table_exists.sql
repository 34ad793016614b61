-- 1 when the table $schema.$table exists, else 0.
select count(*)
from information_schema.tables
where table_schema = $schema and table_name = $table
