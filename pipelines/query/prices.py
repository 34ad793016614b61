"""The price queries: the latest price of every offer (marts.latest_prices) filtered and sorted,
as `gpuprices prices` and `pipelines.api.prices` both run it, and the daily history of the
offers a filter matches (marts.price_history)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from pipelines.query.choices import Spellings
from pipelines.query.errors import UnknownValueError
from pipelines.query.filters import Filter, day_bounds, held_filter, offer_filter

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


@dataclass(frozen=True)
class PricesQuery:
    """The latest-prices query for some filters: its SQL and parameters, the filter (its notes
    say how each value was read) and how many matching offers were left out as held."""

    sql: str
    params: list
    found: Filter
    held: int


def latest_prices_query(con, card: str | None = None, region: str | None = None,
                        kind: str | None = None, period: str | None = None,
                        vendor: str | None = None, max_price: float | None = None,
                        sort: str = "price", include_held: bool = False,
                        limit: int | None = None) -> PricesQuery:
    """The latest price of every offer the filters match (filters.offer_filter), sorted by
    `sort` (PRICE_ORDERS), at most `limit` rows (None: all). A price held back as a possible
    outlier (marts.price_outliers) is left out unless `include_held`."""
    order = price_order(sort)
    found = offer_filter(con, card, region, kind, period, vendor, max_price)
    held = 0 if include_held else held_filter(con, found)
    sql = f"select * from marts.latest_prices where {found.sql} order by {order}"
    if limit is not None:
        sql += f" limit {int(limit)}"
    return PricesQuery(sql, list(found.params), found, held)


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
