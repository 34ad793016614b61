-- The columns a model's select returns, without running it (the select is filled in; no rows,
-- so no order).
select
    * from (
    {select}
) as built
limit 0  -- noqa: AM09
