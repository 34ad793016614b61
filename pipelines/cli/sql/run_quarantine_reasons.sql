-- Why offers of one run's crawls ($run_id: its Dagster run id) were quarantined, most frequent
-- first per source. A problem is stored once, under the crawl that first showed it, so the run's
-- offers are matched to it by source and raw item text (sha256): a replayed or re-crawled offer
-- still says why it was refused. Rows an older version stored again for every replay (other
-- crawls of the same problem) are not counted again.
with run_items as (
    select distinct
        o.source,
        sha256(o.item::varchar) as raw_item_sha256
    from raw.offers as o
    inner join raw.crawls as c on o.crawl_id = c.crawl_id
    where c.run_id = $run_id
),

problems as (
    select
        q.source,
        q.stage,
        q.reason,
        q.crawl_id,
        min(q.crawl_id) over (
            partition by q.source, q.stage, q.raw_item_sha256
        ) as first_crawl_id
    from quarantine as q
    inner join run_items as r
        on q.source = r.source and q.raw_item_sha256 = r.raw_item_sha256
)

select
    source,
    stage,
    reason,
    count(*) as quarantined
from problems
where crawl_id = first_crawl_id
group by all
order by 1, 4 desc
