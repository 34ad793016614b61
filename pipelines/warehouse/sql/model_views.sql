-- Whether the view model $schema.$table exists, and the alias view main.$alias, in one scan of
-- the catalog's views (asked only for a view model or a model with an alias).
select
    coalesce(bool_or(v.schema_name = $schema and v.view_name = $table), false) as view_exists,
    coalesce(bool_or(v.schema_name = 'main' and v.view_name = $alias), false) as alias_exists
from duckdb_views() as v
where v.database_name = current_database() and not v.internal
