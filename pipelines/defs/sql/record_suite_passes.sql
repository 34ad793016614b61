-- raw.batch_suite_passes := the batches the row expectations passed as a whole when
-- observation_batch judged them (registered frame `suite_passes`): the fingerprint of the rows
-- and the suite (pipelines/quality/gx_checks.py, suite_fingerprint) and the `now` it judged by.
-- The blocking check reads it: the same fingerprint, the same verdict, not validated again.
create table if not exists raw.batch_suite_passes (
    fingerprint varchar not null,
    judged_at timestamptz not null
);

delete from raw.batch_suite_passes;

insert into raw.batch_suite_passes by name
select
    fingerprint,
    judged_at
from suite_passes;
