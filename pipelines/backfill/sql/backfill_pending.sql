-- How many passing crawls wait to be normalized (a backfill killed before it published its
-- last chunk, or a crawl loaded by a run that has not normalized it yet).
select count(*) as pending
from raw.crawls as c
where c.passed and c.normalized_at is null
