-- The crawls of one version (the registered frame `archive_crawls`): one per source the version
-- lists, passing and pending, as a crawl's raw.crawls row is; mode 'archive'.
insert into raw.crawls by name
select *
from archive_crawls
on conflict do nothing
