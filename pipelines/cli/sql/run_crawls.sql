-- The crawls of one run ($run_id: its Dagster run id), with what normalization made of each.
select
    source,
    status,
    offers,
    coalesce(normalized_rows, 0) as normalized_rows,
    coalesce(quarantined_rows, 0) as quarantined_rows,
    failures,
    crawl_id
from raw.crawls
where run_id = $run_id
order by source
