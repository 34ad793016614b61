-- A merge-grain model's new rows: its own select (from dbt_like_sql/), computed from the rebuilt
-- days only, one row per key; SqlModel.incremental_statements fills in the select (on its own
-- lines, so that a trailing comment in it cannot swallow the rest) and then replaces the stored
-- row of each of these keys. A temporary table, dropped after the build.
create or replace temporary table merge_rows as
select *
from (
    {select}
) as rebuilt
