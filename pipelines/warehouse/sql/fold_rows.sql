-- A folded model's new rows: its own select (from dbt_like_sql/), run with fold_hour() at the
-- first new hour, keeping the rebuilt days ({kept}): one row per key from the new looks only,
-- or from the whole day for the offers refolded_offers() names. SqlModel.incremental_statements
-- fills in the select (on its own lines, so that a trailing comment in it cannot swallow the
-- rest) and then folds each row into the stored row of its key. A temporary table, dropped
-- after the build.
create or replace temporary table merge_rows as
select *
from (
    {select}
) as rebuilt
where {kept}
