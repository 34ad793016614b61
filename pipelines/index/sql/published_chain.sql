-- What chaining needs of the rows already published by this method version.
select
    series_id,
    index_date,
    chain_level,
    base_date,
    base_level
from marts.price_index
where method_version = $method_version
order by series_id, index_date
