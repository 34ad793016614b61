-- Offers observed more than once in one hour, over the newest $window_hours hours of history
-- (the hours a run writes; older hours only change through a late crawl, which publish_batch
-- also checks): the uniqueness that observations keeps without a primary key.
select
    o.offer_id,
    o.observed_hour,
    count(*) as copies
from observations as o
where
    o.observed_hour
    >= (select max(newest.observed_hour) from observations as newest) - to_hours($window_hours)
group by o.offer_id, o.observed_hour
having count(*) > 1
order by o.observed_hour desc, o.offer_id asc
limit 20
