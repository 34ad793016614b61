-- The columns of one mart ($mart: its table name), in table order; none when it is not built.
select column_name
from information_schema.columns
where table_schema = 'marts' and table_name = $mart
order by ordinal_position
