-- Each source's latest decision about a held crawl (raw.crawl_decisions): what, by whom, when.
select source, crawl_id, decision, decided_by, decided_at, reason
from raw.crawl_decisions
qualify row_number() over (partition by source order by decided_at desc) = 1
