-- A price's as-of date, its age and the horizon of "now", written once (README, "How old a price
-- is"). Stored in the database like since_day(): marts.cheapest_offers, the
-- published copy and the DuckDB shell call them; the read side (pipelines/warehouse/price_age.py)
-- creates the same macros as temporary ones on a connection to a database made before them.

-- price_horizon_days(): how old a price may be and still be shown as a price "now" (the cheapest
-- offers, `gpuprices prices`, `advise`, the API). Half a year: the catalogs and price tables the
-- project reads change several times a year (Google Cloud's pricing file: 290 dated versions from
-- 2022-02 to 2026-08), and the public records the default run loads end months before today (the
-- daily tracker's public mirror on 2026-08-22, the newest readable Google Cloud file on
-- 2026-06-25): at a quarter, "now" held only the crawled snapshots' few prices. A price not seen
-- again within half a year is history, not a quote; `--max-age` widens it.
create or replace macro price_horizon_days() as 180;

-- price_reference_day(): the day ages are counted to: the UTC day of the query, unless a caller
-- states another (`set variable price_reference_day = date '...'`: a test, a rebuilt page).
create or replace macro price_reference_day() as
coalesce(getvariable('price_reference_day')::date, (now() at time zone 'UTC')::date);

-- price_as_of(prices_as_of, last_seen_at): the date the price is known to have held: the date
-- of the published prices where the source dates them, else the UTC day it was last seen.
create or replace macro price_as_of(prices_as_of, last_seen_at) as
coalesce(prices_as_of::date, (last_seen_at::timestamptz at time zone 'UTC')::date);

-- price_age_days(as_of, on_day): whole days from `as_of` to `on_day`; 0 for an as-of after it (a
-- price dated ahead is not older than today), null for no as-of.
create or replace macro price_age_days(as_of, on_day) as
case when as_of is not null then greatest(on_day::date - as_of::date, 0) end;
