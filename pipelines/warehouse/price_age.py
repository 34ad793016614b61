"""A price's as-of date, its age and the horizon of "now": the macros of
sql/price_age_macros.sql (their one home) on a connection, and what Python needs of them.

* price_as_of(prices_as_of, last_seen_at): the date the price is known to have held;
* price_age_days(as_of, on_day): whole days since then (0 for a date ahead, null for none);
* price_reference_day(): the day ages are counted to (today, UTC, unless a caller sets one);
* price_horizon_days(): how old a price may be and still count as a price "now";
* listing_lag_days(), price_origin(source), days_behind(...): how far an offer's last sighting
  may trail the newest data of its record (crawled source or archive) and still be listed now;
* price_is_now(age_days, days_behind_record, max_age_days): the one rule of "now".

The model runner stores them in the database (sql_models.run_model); a reader calls
`use_price_ages`, which also works on a read-only database made before them."""

from __future__ import annotations

from datetime import UTC, date, datetime
from functools import cache

from pipelines.warehouse.sql_files import sql_text


def price_age_macros_sql(temporary: bool = False) -> str:
    """The statements of sql/price_age_macros.sql, or their temporary form (a read-only
    database; one made before the macros)."""
    text = sql_text(__file__, "price_age_macros")
    if temporary:
        text = text.replace("create or replace macro", "create or replace temp macro")
    return text


def create_price_age_macros(con, temporary: bool = False) -> None:
    """The macros of sql/price_age_macros.sql, stored in the connection's database, or temporary
    ones."""
    con.execute(price_age_macros_sql(temporary))


def utc_today() -> date:
    """Today in UTC: the day every reader counts ages to (tests replace it)."""
    return datetime.now(UTC).date()


def use_price_ages(con, on_day: date | None = None) -> date:
    """Make the macros callable on a reading connection and count ages to `on_day` (default:
    utc_today()); returns that day."""
    day = on_day or utc_today()
    create_price_age_macros(con, temporary=True)
    con.execute(f"set variable price_reference_day = date '{day.isoformat()}'")
    return day


@cache
def _macro_value(name: str) -> int:
    import duckdb

    with duckdb.connect() as con:
        create_price_age_macros(con, temporary=True)
        return int(con.execute(f"select {name}()").fetchone()[0])


def price_horizon_days() -> int:
    """The horizon, in days, as price_horizon_days() states it (read from the macro itself)."""
    return _macro_value("price_horizon_days")


def listing_lag_days() -> int:
    """How many days an offer's last sighting may trail its record's newest data and still be
    listed now, as listing_lag_days() states it."""
    return _macro_value("listing_lag_days")
