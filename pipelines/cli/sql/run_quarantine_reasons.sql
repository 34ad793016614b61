-- Why rows of one run's crawls ($run_id: its Dagster run id) were quarantined, most frequent
-- first per source.
select
    q.source,
    q.stage,
    q.reason,
    count(*) as quarantined
from quarantine as q
inner join raw.crawls as c on q.crawl_id = c.crawl_id
where c.run_id = $run_id
group by all
order by 1, 4 desc
