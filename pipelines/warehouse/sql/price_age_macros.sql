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

-- horizon_first_day(table_name, day_column): the first day within price_horizon_days() of a
-- table's newest day (a fixed history is scored the same any day). The newest day is the first
-- row in descending order, not max(): DuckDB then skips the row groups older than a day it has
-- seen (tables are stored in day order), through query_table() as when the table is named.
-- Names, not identifiers: pass them as text ('marts.spot_discount', 'day').
create or replace macro horizon_first_day(table_name, day_column) as (
    select t.newest_day
    from (
        select columns(lambda c: c = day_column) as newest_day
        from query_table(table_name)
    ) as t
    order by t.newest_day desc
    limit 1
) - price_horizon_days();

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

-- listing_lag_days(): how many days an offer's last sighting may trail the newest data of its
-- record (price_origin) and still be listed "now". Each crawl and each archive version is a whole
-- catalog, so an offer its record's newest data no longer holds was delisted, however recent its
-- own date: after a backfill, 79 of 173 cheapest offers were over 30 days behind the newest data;
-- on the default run with the public record, 63 of the daily tracker's offers in the horizon had
-- left it (last seen 2026-07-10, its newest day 2026-08-22). A week keeps an offer one crawl or
-- one day of a daily tracker missed; a quarterly or edited archive's previous version is further.
create or replace macro listing_lag_days() as 7;

-- price_origin(source): the record a row was read from: the crawled source, or for an archive's
-- sources, '<archive>:<vendor>' (pipelines/backfill/items.py, source_name), the archive, whose
-- newest version is the whole table (a vendor the table dropped is not listed now).
create or replace macro price_origin(source) as split_part(source, ':', 1);

-- days_behind(last_seen_at, newest_seen_at): whole UTC days an offer's last sighting trails the
-- newest sighting of its record (0 for the newest itself).
create or replace macro days_behind(last_seen_at, newest_seen_at) as
greatest(
    (newest_seen_at::timestamptz at time zone 'UTC')::date
    - (last_seen_at::timestamptz at time zone 'UTC')::date,
    0
);

-- price_is_now(age_days, days_behind_record, max_age_days): the one rule of "now" (the cheapest
-- offers, `prices`, `advise`, the API, the report's cheapest now): a price at most `max_age_days`
-- old (price_horizon_days() unless a reader widens it: `--max-age`), of an offer its record still
-- lists (at most listing_lag_days() behind the record's newest data). An undated price is never
-- "now".
create or replace macro price_is_now(age_days, days_behind_record, max_age_days) as
coalesce(age_days <= max_age_days and days_behind_record <= listing_lag_days(), false);
