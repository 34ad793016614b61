-- Each pending crawl's quarantined offers, counted on its raw.crawls row.
update raw.crawls as c set quarantined_rows = (
    select count(*) from quarantine as q
    where q.crawl_id = c.crawl_id
)
where c.passed and c.normalized_at is null
