-- Every table and view with its kind and comment: what apply_comments may describe.
select
    schema_name || '.' || table_name as table_ref,
    'table' as object_kind,
    comment as comment_text
from duckdb_tables()
union all
select
    schema_name || '.' || view_name as table_ref,
    'view' as object_kind,
    comment as comment_text
from duckdb_views()
where not internal
