-- One decision about a crawl (pipelines/warehouse/crawl_decisions.py).
insert into raw.crawl_decisions (
    crawl_id, source, decided_at, decision, decided_by, check_name, figure, bound, reason
)
values (
    $crawl_id, $source, $decided_at, $decision, $decided_by, $check_name, $figure, $bound,
    $reason
)
