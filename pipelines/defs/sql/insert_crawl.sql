-- One crawl's verdict, whether it passed or not.
insert into raw.crawls (
    crawl_id, run_id, source, mode, started_at, finished_at, passed, status, offers, requests,
    failures, price_basis, prices_as_of, opted_in
)
values (
    $crawl_id, $run_id, $source, $mode, $started_at, $finished_at, $passed, $status, $offers,
    $requests, $failures, $price_basis, $prices_as_of, $opted_in
)
