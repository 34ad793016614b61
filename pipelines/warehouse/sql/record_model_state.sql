-- A model was built at $built_at from the SQL $sql_sha256; $reset_at: its last rebuild from
-- scratch; $runner_stamp: the runner's setup it was built under.
insert or replace into raw.model_state (model, built_at, sql_sha256, reset_at, runner_stamp)
values ($model, $built_at, $sql_sha256, $reset_at, $runner_stamp)
