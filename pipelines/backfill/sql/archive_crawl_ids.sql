-- The crawls an archive's backfills have loaded (their ids name the source, commit time and
-- commit), read once when a backfill starts: a version whose crawls are all there is not read
-- again.
select c.crawl_id
from raw.crawls as c
where c.mode = 'archive' and c.source like $prefix || '%'
