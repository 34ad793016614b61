-- The earliest UTC day with observations loaded since $built_at (null: nothing new). Observations
-- are loaded by crawl; a crawl's normalized_at says when its rows joined `observations`.
select min(timezone('UTC', observed_hour))::date as first_new_day
from observations
where crawl_id in (
    select crawl_id from raw.crawls
    where normalized_at >= $built_at
)
