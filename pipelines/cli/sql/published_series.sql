-- How many index series have a published row (any method): an empty filtered answer says so.
select count(distinct series_id) from marts.price_index
