-- The validated batch joins the history; a row already there (same offer, same hour) is kept.
-- observations has no primary key (pipelines/warehouse/db.py says why), so the skip is a join:
-- bounded to the batch's hours, it reads only the newest row groups of the history.
insert into observations by name
select b.*
from observation_batch as b
where not exists (
    select 1
    from observations as o
    where
        o.observed_hour >= (select min(x.observed_hour) from observation_batch as x)
        and o.observed_hour = b.observed_hour
        and o.offer_id = b.offer_id
)
qualify row_number() over (
    partition by b.offer_id, b.observed_hour order by b.crawl_id
) = 1
