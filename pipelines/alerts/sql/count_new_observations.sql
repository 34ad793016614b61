-- How many observations this detection looks at (made by new_observations.sql).
select count(*) as new_observations
from alert_new_observations
