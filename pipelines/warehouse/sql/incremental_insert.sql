-- An incremental model's rebuilt rows: its own select (from dbt_like_sql/), keeping the rows
-- {kept} selects (from a first day on, or of the new keys). SqlModel.incremental_statements fills
-- in the table, the select and the condition; the select stands on its own lines so that a
-- trailing comment in it cannot swallow the rest.
insert into {table} by name
select *
from (
    {select}
) as rebuilt
where {kept}
