-- Every crawl held back by a blocking rule now (raw.crawls.status 'held'), with since when and
-- why (its latest 'held' decision in raw.crawl_decisions), oldest first.
select
    c.source,
    c.crawl_id,
    max(d.decided_at) as held_since,
    arg_max(d.reason, d.decided_at) as reason
from raw.crawls as c
left join raw.crawl_decisions as d
    on c.crawl_id = d.crawl_id and d.decision = 'held'
where c.status = 'held'
group by c.source, c.crawl_id
order by held_since, c.source
