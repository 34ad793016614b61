-- Each source's latest crawl, every column (databases written before raw.crawls had a status
-- column lack it; the caller derives it from `passed` then).
select *
from raw.crawls
qualify row_number() over (partition by source order by crawl_id desc) = 1
