-- The batches the row expectations passed when observation_batch judged them
-- (record_suite_passes.sql).
select
    fingerprint,
    judged_at
from raw.batch_suite_passes
