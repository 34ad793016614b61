-- Append the new rows (new_index_rows, registered by pipelines/index/publish.py); a row already
-- published for its series, day and method is never touched.
insert into marts.price_index by name
select n.*
from new_index_rows as n
anti join marts.price_index as p
    on n.series_id = p.series_id
    and n.index_date = p.index_date
    and n.method_version = p.method_version
