-- alert_held_observations: the observations the price rules must not see yet (possible
-- outliers and when a later crawl confirmed them), as marts.held_observations works them out.
create or replace temp table alert_held_observations as
select
    offer_id,
    observed_at,
    confirmed_at
from marts.held_observations
