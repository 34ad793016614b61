-- The columns marts.latest_prices has in the database the offers are read from (an older
-- database lacks the machine's specs).
select column_name
from duckdb_columns()
where schema_name = 'marts' and table_name = 'latest_prices'
