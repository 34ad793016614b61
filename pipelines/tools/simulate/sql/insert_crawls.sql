    insert {or_ignore} into raw.crawls (crawl_id, run_id, source, mode, started_at, finished_at,
        passed, offers, requests, failures, normalized_at, normalized_rows, quarantined_rows,
        status)
    select
        'sim-' || s.source || '-' || strftime(make_timestamp(c.h * 3600000000), '%Y%m%dT%H'),
        ?, s.source, 'simulated', to_timestamp(c.observed_s - 20), to_timestamp(c.observed_s + 10),
        true, c.offers, null, []::varchar[], ?, c.offers, 0, 'passed'
    from sim_crawls as c
    join sim_sources as s on c.si = s.si
