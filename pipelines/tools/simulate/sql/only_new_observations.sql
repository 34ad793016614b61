-- The filter insert_observations takes in append_hour: an offer's row for an hour already there
-- is skipped (the hours of the chunk bound the scan to the newest row groups).
where not exists (
    select 1 from observations as x
    where
        x.observed_hour >= (select to_timestamp(min(h) * 3600) from sim_chunk)
        and x.observed_hour = to_timestamp(c.h * 3600)
        and x.offer_id = o.offer_id
)
