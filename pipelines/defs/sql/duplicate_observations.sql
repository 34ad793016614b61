-- Offers observed more than once in one hour, over the newest $window_hours hours of history
-- (the hours a run writes; older hours only change through a late crawl, which publish_batch
-- also checks): the uniqueness that observations keeps without a primary key.
select
    offer_id,
    observed_hour,
    count(*) as copies
from observations
where observed_hour >= (select max(observed_hour) from observations) - to_hours($window_hours)
group by offer_id, observed_hour
having count(*) > 1
order by observed_hour desc, offer_id
limit 20
