-- Each crawl of the batch (raw.batch_crawls) with what was decided of it before this run
-- (raw.crawl_decisions; the decision words are pipelines/quality/settlement.py's): since when it
-- is held (null: not held), whether that hold was alerted on, whether a person accepted it last.
with decided as (
    select
        crawl_id,
        max(decided_at) filter (where decision = 'held') as last_held_at,
        bool_or(decision = 'unresolved') as alerted,
        arg_max(decision, decided_at) as last_decision
    from raw.crawl_decisions
    group by crawl_id
)

select
    b.crawl_id,
    c.source,
    case when c.status = 'held' then coalesce(d.last_held_at, c.finished_at) end as held_since,
    coalesce(d.alerted, false) as alerted,
    coalesce(d.last_decision = 'accepted', false) as accepted
from raw.batch_crawls as b
inner join raw.crawls as c on b.crawl_id = c.crawl_id
left join decided as d on b.crawl_id = d.crawl_id
order by b.crawl_id
