-- How many of the models in $reads were rebuilt from scratch after $built_at (a model that reads
-- one of them holds rows computed from the old ones).
select count(*)
from raw.model_state
where list_contains($reads::varchar[], model) and reset_at > $built_at
