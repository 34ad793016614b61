-- The state of every source's latest prices, from its crawls (raw.crawls), as every reader shows
-- it beside them (aged_latest_prices.sql): 'held' (its latest crawl is held back by a blocking
-- rule), 'failed' (its latest crawl failed or a person rejected it), 'stale' (no passing,
-- published crawl within {freshness_hours} hours of the newest crawl of any source: the run
-- clock, so a published copy reads the same whenever it is read), else 'fresh'; and, when not
-- fresh, source_stale_since: the finish of its last passing, published crawl (null: none).
-- A source whose crawls are all backfills of an archive (mode 'archive') is 'archive': its
-- prices carry their own dates (price_basis, prices_as_of), it is never crawled again.
with crawled as (
    select
        source,
        mode,
        passed,
        status,
        normalized_at,
        coalesce(finished_at, started_at) as crawled_at
    from raw.crawls
),

run_clock as (
    select max(crawled_at) as newest_crawl
    from crawled
    where mode != 'archive'
),

by_source as (
    select
        source,
        bool_and(mode = 'archive') as archive_only,
        max(crawled_at) filter (
            where passed and normalized_at is not null and mode != 'archive'
        ) as last_published_crawl,
        arg_max(status, crawled_at) filter (where mode != 'archive') as latest_status,
        arg_max(passed, crawled_at) filter (where mode != 'archive') as latest_passed
    from crawled
    group by source
),

states as (
    select
        s.source,
        s.last_published_crawl,
        case
            when s.archive_only then 'archive'
            when s.latest_status = 'held' then 'held'
            -- a skipped source (opt-in not named, no API key) did not fail: it ages
            when not s.latest_passed and coalesce(s.latest_status, '') != 'skipped' then 'failed'
            when
                s.last_published_crawl is null
                or s.last_published_crawl
                < c.newest_crawl - to_seconds({freshness_hours}::double * 3600)
                then 'stale'
            else 'fresh'
        end as source_state
    from by_source as s
    cross join run_clock as c
)

select
    source,
    source_state,
    case
        when source_state not in ('fresh', 'archive') then last_published_crawl
    end as source_stale_since
from states
