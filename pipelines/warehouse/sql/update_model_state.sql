-- A model built before was built again at $built_at from the SQL $sql_sha256; $reset_at: its last
-- rebuild from scratch; $runner_stamp: the runner's setup (an update: cheaper than
-- record_model_state's insert or replace).
update raw.model_state
set
    built_at = $built_at, sql_sha256 = $sql_sha256, reset_at = $reset_at,
    runner_stamp = $runner_stamp
where model = $model
