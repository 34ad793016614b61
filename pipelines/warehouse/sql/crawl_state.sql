-- A crawl's state for a person's decision (gpuprices accept / reject): its source, whether it
-- passed and was published, its status, and the row rule's check ($1) if its latest hold was one.
with last_hold as (
    select crawl_id, arg_max(check_name, decided_at) as check_name
    from raw.crawl_decisions
    where decision = 'held'
    group by crawl_id
)

select
    c.source,
    c.passed,
    c.normalized_at,
    c.status,
    case when h.check_name = $1 then h.check_name end as row_rule
from raw.crawls as c
left join last_hold as h on c.crawl_id = h.crawl_id
where c.crawl_id = $2
