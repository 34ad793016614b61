-- The crawls of one version (the registered frame `archive_crawls`): one per source the version
-- lists, passing and pending, as a crawl's raw.crawls row is; mode 'archive'. A crawl already
-- there (a version read again) is skipped: raw.crawls has no key (pipelines/warehouse/db.py).
insert into raw.crawls by name
select a.*
from archive_crawls as a
where a.crawl_id not in (select c.crawl_id from raw.crawls as c)
