-- The published index rows with a level, of the method that published last (as the readers
-- choose: pipelines/query/index.py).
select
    series_id,
    index_date,
    index_level,
    listing_median,
    base_date,
    base_level,
    method_version
from marts.price_index
where
    index_level is not null
    and method_version = (
        select arg_max(p.method_version, p.published_at) from marts.price_index as p
    )
order by series_id, index_date
