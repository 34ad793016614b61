-- The validated batch joins the history; a row already there (same offer, same hour) is kept.
insert into observations by name
select * from observation_batch
on conflict do nothing
