-- A sliced full rebuild that failed part-way (model_rebuild.py): the models its slices built
-- hold the history only up to a slice's end, so their state is forgotten and the next build of
-- each starts from scratch (a model with no state is built in full, and so are its readers).
delete from raw.model_state
where model in (select unnest($models::varchar[]))
