-- Every source without a passing crawl in the last $freshness_hours hours, with its last one.
select
    source,
    max(finished_at) filter (where passed) as last_passing_crawl
from raw.crawls
group by 1
having
    last_passing_crawl is null
    or last_passing_crawl < now() - to_seconds($freshness_hours::double * 3600)
order by 1
