-- marts.latest_prices with each price's as-of date and its age in days to the reference day (the
-- macros of pipelines/warehouse/sql/price_age_macros.sql): the latest prices as every reader
-- (`gpuprices prices`, the API, the advisor) selects them.
select
    l.*,  -- noqa: AM04
    price_as_of(l.prices_as_of, l.last_seen_at) as price_as_of,
    price_age_days(price_as_of(l.prices_as_of, l.last_seen_at), price_reference_day())
        as price_age_days
from marts.latest_prices as l
