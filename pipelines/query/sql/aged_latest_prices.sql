-- marts.latest_prices with each price's as-of date and its age in days to the reference day, how
-- many days its last sighting trails the newest data of its record (its crawled source or
-- archive: the macros of pipelines/warehouse/sql/price_age_macros.sql; price_is_now reads both),
-- and the state of its source's crawls (source_states.sql; null: no crawl of its source is
-- recorded): the latest prices as every reader (`gpuprices prices`, the API, the advisor, the
-- latest_prices feed) selects them.
with source_states as (
    {source_states}
)

select
    l.*,  -- noqa: AM04
    price_as_of(l.prices_as_of, l.last_seen_at) as price_as_of,
    price_age_days(price_as_of(l.prices_as_of, l.last_seen_at), price_reference_day())
        as price_age_days,
    days_behind(l.last_seen_at, max(l.last_seen_at) over (partition by price_origin(l.source)))
        as days_behind_record,
    s.source_state,
    s.source_stale_since
from marts.latest_prices as l
left join source_states as s on l.source = s.source
