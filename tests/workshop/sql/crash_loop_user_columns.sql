-- The tables the crash loop compares with the reference, with their columns in order:
-- observations, quarantine and every model table (staging, intermediate, marts).
select
    c.table_schema,
    c.table_name,
    c.column_name
from information_schema.columns as c
inner join information_schema.tables as t
    on c.table_schema = t.table_schema and c.table_name = t.table_name
where
    t.table_type = 'BASE TABLE'
    and (
        c.table_schema in ('staging', 'intermediate', 'marts')
        or (c.table_schema = 'main' and c.table_name in ('observations', 'quarantine'))
    )
order by c.table_schema, c.table_name, c.ordinal_position
