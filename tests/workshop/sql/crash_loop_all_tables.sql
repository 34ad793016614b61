-- Every base table of a published database (each must answer a count after a crash).
select table_schema || '.' || table_name as table_ref
from information_schema.tables
where table_type = 'BASE TABLE'
order by all
