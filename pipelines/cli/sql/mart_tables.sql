-- Every mart of the database, by name.
select table_name
from information_schema.tables
where table_schema = 'marts'
order by table_name
