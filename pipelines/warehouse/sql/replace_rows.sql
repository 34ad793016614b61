-- A model rebuilt in full inside its existing table (same SQL, same runner setup, no input
-- rebuilt from scratch: the stored columns are the select's): every row is replaced by the
-- select's (from dbt_like_sql/), by name, so the table keeps its comments and everything else
-- on it. ModelBatch fills in the table and the select (on its own lines, so that a trailing
-- comment in it cannot swallow the rest).
delete from {table};

insert into {table} by name
select *
from (
    {select}
) as rebuilt
