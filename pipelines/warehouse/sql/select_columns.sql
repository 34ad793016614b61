-- The columns a model's select returns, without running it (the select is filled in).
select * from (
{select}
)
limit 0
