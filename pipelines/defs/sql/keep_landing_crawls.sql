-- The batch keeps the crawls that land (the registered frame `landing`); a held or rejected
-- crawl leaves it, so `observations` does not mark it normalized.
delete from raw.batch_crawls
where crawl_id not in (select l.crawl_id from landing as l)
