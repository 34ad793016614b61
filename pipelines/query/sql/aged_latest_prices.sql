-- marts.latest_prices with each price's as-of date and its age in days to the reference day (the
-- macros of pipelines/warehouse/sql/price_age_macros.sql), and the state of its source's crawls
-- (source_states.sql; null: no crawl of its source is recorded): the latest prices as every
-- reader (`gpuprices prices`, the API, the advisor, the latest_prices feed) selects them.
with source_states as (
    {source_states}
)

select
    l.*,  -- noqa: AM04
    price_as_of(l.prices_as_of, l.last_seen_at) as price_as_of,
    price_age_days(price_as_of(l.prices_as_of, l.last_seen_at), price_reference_day())
        as price_age_days,
    s.source_state,
    s.source_stale_since
from marts.latest_prices as l
left join source_states as s on l.source = s.source
