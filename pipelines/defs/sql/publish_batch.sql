-- The validated batch joins the history; a row already there (same offer, same hour) is kept.
-- observations has no primary key (pipelines/warehouse/db.py says why), so the skip is a join:
-- bounded to the batch's hours, it reads only the newest row groups of the history. The batch
-- itself holds each offer and hour once (the blocking check on observation_batch says so).
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
