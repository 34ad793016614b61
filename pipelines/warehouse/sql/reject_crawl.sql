-- Set a pending crawl aside: it no longer counts as passed, and $reason joins its failures.
update raw.crawls
set
    passed = false,
    status = 'rejected',
    failures = list_append(failures, $reason)
where crawl_id = $crawl_id
