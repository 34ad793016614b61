-- Crawls that passed their monitors but are not published yet (a blocking check held them).
select source, crawl_id
from raw.crawls
where passed and normalized_at is null
order by 1, 2
