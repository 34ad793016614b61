-- One passing raw.crawls row per source and simulated crawl hour (sim_crawls), as a real crawl
-- would leave. {or_ignore}: "or ignore" when an hour may already be there (append_hour).
insert {or_ignore} into raw.crawls (crawl_id, run_id, source, mode, started_at, finished_at,
    passed, offers, requests, failures, normalized_at, normalized_rows, quarantined_rows,
    status, price_basis)
select
    'sim-' || s.source || '-' || strftime(make_timestamp(c.h * 3600000000), '%Y%m%dT%H'),
    ?, s.source, 'simulated', to_timestamp(c.observed_s - 20), to_timestamp(c.observed_s + 10),
    true, c.offers, null, []::varchar[], ?, c.offers, 0, 'passed', 'simulated'
from sim_crawls as c
join sim_sources as s on c.si = s.si
