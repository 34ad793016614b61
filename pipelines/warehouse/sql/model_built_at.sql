-- When the runner last built each model (raw.model_state, model_batch.py's).
select
    model,
    built_at
from raw.model_state
