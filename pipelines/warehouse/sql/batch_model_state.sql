-- Every model's last build (raw.model_state), read once for a batch of builds (model_batch.py):
-- the runner picks each model's own and compares the reset times of the models it reads with
-- its build time.
select s.model, s.built_at, s.sql_sha256, s.reset_at, s.runner_stamp
from raw.model_state as s
