-- Every source without a passing crawl that was not held back in the $freshness_hours hours
-- before the run clock, with its last one, and every source with a crawl a blocking rule holds
-- now (held_since: its oldest held crawl's finish; raw.crawl_decisions says why): both are
-- warnings. The run clock is the newest crawl of any source, as the readers' source states take it
-- (pipelines/query/sql/source_states.sql): a run that reaches this check long after its crawl
-- (a loaded machine, a long rebuild) does not find its own crawls stale. A source whose crawls
-- are all backfills of an archive is never crawled again, so it is never stale.
with run_clock as (
    select max(coalesce(finished_at, started_at)) as newest_crawl
    from raw.crawls
    where mode != 'archive'
)

select
    c.source,
    max(c.finished_at) filter (
        where c.passed and coalesce(c.status, 'passed') != 'held'
    ) as last_passing_crawl,
    min(c.finished_at) filter (where c.status = 'held') as held_since,
    coalesce(
        bool_and(c.mode = 'archive')
        or last_passing_crawl
        >= any_value(r.newest_crawl) - to_seconds($freshness_hours::double * 3600),
        false
    ) as fresh
from raw.crawls as c
cross join run_clock as r
group by 1
having not fresh or held_since is not null
order by 1
