"""The price queries: the latest price of every offer (marts.latest_prices) filtered and sorted,
as `gpuprices prices` and `pipelines.api.prices` both run it, and the daily history of the
offers a filter matches (marts.price_history)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from pipelines.quality.thresholds import FRESHNESS_HOURS
from pipelines.query.ages import PriceAges, left_out_sql, max_age_days, within_age_sql
from pipelines.query.choices import Spellings
from pipelines.query.errors import UnknownValueError
from pipelines.query.filters import Filter, day_bounds, held_filter, offer_filter
from pipelines.warehouse.price_age import price_horizon_days, use_price_ages
from pipelines.warehouse.sql_files import sql_text

# The tables the latest-prices query reads.
LATEST_PRICES_TABLES = ("marts.latest_prices", "marts.price_outliers")
# How the latest prices can be sorted; offer_id breaks the last ties.
PRICE_ORDERS = {"price": "price_per_gpu_hour_cny, vendor, gpu_model, region_code",
                "vendor": "vendor, gpu_model, price_per_gpu_hour_cny, region_code"}
SORTS = Spellings(lambda: {"price": ("价格", "cheapest"),
                           "vendor": ("厂商", "供应商", "vendors")})


def price_order(sort: str) -> str:
    """The `order by` of a sort (a PRICE_ORDERS key); UnknownValueError for any other."""
    if sort not in PRICE_ORDERS:
        raise UnknownValueError(f"sort: {sort!r} is not one of {', '.join(PRICE_ORDERS)}",
                                "sort")
    return f"{PRICE_ORDERS[sort]}, offer_id"


def source_states_sql() -> str:
    """Every source's `source_state` ('fresh', 'stale', 'held', 'failed', 'archive') and
    `source_stale_since` (sql/source_states.sql), stale past FRESHNESS_HOURS."""
    return sql_text(__file__, "source_states").format(freshness_hours=float(FRESHNESS_HOURS))


def aged_latest_prices_sql() -> str:
    """marts.latest_prices with each price's `price_as_of` and `price_age_days`, and its
    source's `source_state` and `source_stale_since` (sql/aged_latest_prices.sql), for a reading
    connection that called use_price_ages."""
    return sql_text(__file__, "aged_latest_prices").format(source_states=source_states_sql())


@dataclass(frozen=True)
class PricesQuery:
    """The latest-prices query for some filters: its SQL and parameters, the filter (its notes
    say how each value was read), how many matching offers were left out as held, how many as
    older than `max_age` days (None: no limit) and how many as no longer listed by their record
    (ages.left_out_sql); `ages`: how old the offers shown are and the newest as-of among all that
    match, for ages.old_prices_note."""

    sql: str
    params: list
    found: Filter
    held: int
    max_age: int | None
    aged_out: int
    ages: PriceAges
    delisted: int = 0


def latest_prices_query(con, card: str | None = None, region: str | None = None,
                        kind: str | None = None, period: str | None = None,
                        vendor: str | None = None, max_price: float | None = None,
                        sort: str = "price", include_held: bool = False,
                        limit: int | None = None, max_age: int | str | None = None,
                        on_day: date | None = None) -> PricesQuery:
    """The latest price of every offer the filters match (filters.offer_filter), with its as-of
    date and age in days to `on_day` (default today, UTC), sorted by `sort` (PRICE_ORDERS), at
    most `limit` rows (None: all). A price held back as a possible outlier (marts.price_outliers)
    is left out unless `include_held`; one that is not "now" (older than `max_age` days,
    ages.max_age_days: None is the horizon, "all" no limit; or no longer listed by its record)
    is left out and counted by reason."""
    order = price_order(sort)
    days = max_age_days(max_age)
    use_price_ages(con, on_day)
    found = offer_filter(con, card, region, kind, period, vendor, max_price)
    held = 0 if include_held else held_filter(con, found)
    aged, horizon = aged_latest_prices_sql(), price_horizon_days()
    within, (older, delisted) = within_age_sql(days), left_out_sql(days)
    shown, aged_out, unlisted, old, newest, newest_age = con.execute(
        f"select count(*) filter (where {within}), count(*) filter (where {older}), "
        f"count(*) filter (where {delisted}), "
        f"count(*) filter (where {within} and price_age_days > price_horizon_days()), "
        f"max(price_as_of), price_age_days(max(price_as_of), price_reference_day()) from ({aged}) "
        f"where {found.sql}", found.params).fetchone()
    sql = f"select * from ({aged}) where {found.sql} and {within} order by {order}"
    if limit is not None:
        sql += f" limit {int(limit)}"
    return PricesQuery(sql, list(found.params), found, held, days, aged_out,
                       PriceAges(shown, old, newest, newest_age, horizon), unlisted)


def price_history_query(found: Filter, since: str | date | None = None,
                        until: str | date | None = None) -> tuple[str, list]:
    """SQL and parameters for the daily history (marts.price_history) of the offers `found`
    matches among the latest prices, from `since` to `until` (local days, inclusive), ordered by
    card, vendor, offer and day."""
    days, day_params = day_bounds("local_date", since, until)
    where = [f"offer_id in (select offer_id from marts.latest_prices where {found.sql})", *days]
    params = [*found.params, *day_params]
    return (f"select * from marts.price_history where {' and '.join(where)} "
            "order by gpu_model, vendor, offer_id, local_date", params)
