-- Every column of the user's tables and views, with its comment.
select
    schema_name,
    table_name,
    column_name,
    comment as comment_text
from duckdb_columns()
where not internal
