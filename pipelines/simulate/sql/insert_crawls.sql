-- One passing raw.crawls row per source and simulated crawl hour (sim_crawls), as a real crawl
-- would leave. {only_new} is true when an hour may already be there (append_hour): then a crawl
-- already there is skipped (raw.crawls has no key: pipelines/warehouse/db.py UNKEYED_HISTORY).
insert into raw.crawls (
    crawl_id, run_id, source, mode, started_at, finished_at,
    passed, offers, requests, failures, normalized_at, normalized_rows, quarantined_rows,
    status, price_basis
)
select n.*
from (
    select
        'sim-' || s.source || '-' || strftime(make_timestamp(c.h * 3600000000), '%Y%m%dT%H')
            as crawl_id,
        ? as run_id,
        s.source,
        'simulated' as mode,
        to_timestamp(c.observed_s - 20) as started_at,
        to_timestamp(c.observed_s + 10) as finished_at,
        true as passed,
        c.offers,
        null as requests,
        []::varchar[] as failures,
        ? as normalized_at,
        c.offers as normalized_rows,
        0 as quarantined_rows,
        'passed' as status,
        'simulated' as price_basis
    from sim_crawls as c
    inner join sim_sources as s on c.si = s.si
) as n
where not {only_new} or n.crawl_id not in (select k.crawl_id from raw.crawls as k)
