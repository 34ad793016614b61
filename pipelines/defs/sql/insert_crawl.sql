-- One crawl's verdict, whether it passed or not.
insert into raw.crawls (
    crawl_id, run_id, source, mode, started_at, finished_at, passed, status, offers, requests,
    failures
)
values (
    $crawl_id, $run_id, $source, $mode, $started_at, $finished_at, $passed, $status, $offers,
    $requests, $failures
)
