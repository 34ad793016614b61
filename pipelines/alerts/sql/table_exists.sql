-- Whether schema.table exists (a table another asset writes may not exist yet).
select count(*) > 0 as found
from information_schema.tables
where table_schema = $schema_name and table_name = $table_name
