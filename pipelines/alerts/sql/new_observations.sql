-- The observations loaded since the previous detection, for the incremental rules (drop,
-- new_low). observed_at alone is not enough (a replayed or re-run crawl can land older
-- observations after newer ones), so an observation is new when it is newer than the newest one
-- seen last time, or when its crawl was normalized after the last detection started. Without a
-- watermark (the first detection on a database) only the last $lookback_hours before the newest
-- observation count, so existing history does not flood the channels. An observation reached
-- via an archive (`gpuprices backfill`, the public price record a run loads) is history, never
-- new, whenever it is loaded.
-- Parameters: $max_observed_at, $detected_at (the watermark, or null), $lookback_hours.
create or replace temp table alert_new_observations as
select
    o.offer_id,
    o.observed_at
from observations as o
where
    o.reaches_via is distinct from 'archive'
    and case
        when $max_observed_at is null
            then o.observed_at
            >= (
                select max(newest.observed_at) from observations as newest
                where newest.reaches_via is distinct from 'archive'
            )
            - to_microseconds(($lookback_hours * 3600e6)::bigint)
        else o.observed_at > $max_observed_at
            or o.crawl_id in (
                select c.crawl_id from raw.crawls as c
                where c.normalized_at >= $detected_at
            )
    end
