-- Every source without a passing crawl that was not held back in the last $freshness_hours hours,
-- with its last one, and every source with a crawl a blocking rule holds now (held_since: its
-- oldest held crawl's finish; raw.crawl_decisions says why): both are warnings.
select
    source,
    max(finished_at) filter (
        where passed and coalesce(status, 'passed') != 'held'
    ) as last_passing_crawl,
    min(finished_at) filter (where status = 'held') as held_since,
    coalesce(
        last_passing_crawl >= now() - to_seconds($freshness_hours::double * 3600), false
    ) as fresh
from raw.crawls
group by 1
having not fresh or held_since is not null
order by 1
