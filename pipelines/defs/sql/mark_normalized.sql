-- Each pending crawl is done: when its rows joined `observations`, and how many of them.
update raw.crawls as c set
    normalized_at = now(),
    normalized_rows = (
        select count(*) from observation_batch as b
        where b.crawl_id = c.crawl_id
    )
where c.passed and c.normalized_at is null
