-- This run's quarantined offers (the registered frame `quarantined`). A crawl normalized again
-- (its batch was blocked, so it stayed pending) keeps the rows it was first quarantined with.
insert into quarantine by name
select * from quarantined
on conflict do nothing
