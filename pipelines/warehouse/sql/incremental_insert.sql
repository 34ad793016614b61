-- An incremental model's new days: its own select (from dbt_like_sql/), kept from the first
-- day to rebuild on. SqlModel.incremental_statements fills in the table, the select, the
-- incremental column and the day; the select stands on its own lines so that a trailing
-- comment in it cannot swallow the rest.
insert into {table} by name
select * from (
{select}
)
where {column} >= date '{since}'
