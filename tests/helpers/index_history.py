"""Hand-made daily histories for the price index: each offer is a price path over days, looked at
once a day at 12:00 UTC (20:00 in Beijing), inserted as observations; `publish` builds the models
the index reads and appends its rows, as the run's price_index step does."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import duckdb

from pipelines.index import publish_index
from pipelines.warehouse.db import ensure_schema
from tests.helpers.observations import BEIJING, build_only, insert, obs, us

START = date(2026, 10, 1)
PUBLISHED_AT = datetime(2026, 12, 2, 3, tzinfo=UTC)
USD_CNY = Decimal("7.1")
INDEX_COLUMNS_SQL = "select * from marts.price_index order by series_id, index_date"


@dataclass(frozen=True)
class Offer:
    """One offer: its vendor, sku and listed price on day i (None: not listed that day)."""
    vendor: str
    sku: str
    prices: Sequence[float | None]
    currency: str = "CNY"
    overrides: dict = field(default_factory=dict)

    def rows(self, start: date = START, hour: int = 12) -> list[dict]:
        place = BEIJING if self.currency == "CNY" else us("Virginia", "us-east-1")
        out = []
        for i, price in enumerate(self.prices):
            if price is None:
                continue
            at = datetime.combine(start + timedelta(days=i), datetime.min.time(), UTC)
            # an hourly whole card: the listed amount is the price per GPU-hour
            amounts = ({"price_per_gpu_hour_usd": Decimal(str(price)),
                        "price_per_gpu_hour_cny": Decimal(str(price)) * USD_CNY}
                       if self.currency == "USD" else {})
            # `overrides` may set any column, the source too (src_<vendor> without)
            out.append(obs(price, **{"observed_at": at + timedelta(hours=hour),
                                     "vendor": self.vendor, "source": f"src_{self.vendor.lower()}",
                                     "sku": self.sku, "currency": self.currency,
                                     "crawl_id": f"crawl-{i}", **place, **amounts,
                                     **self.overrides}))
        return out


def flat(price: float, days: int) -> list[float]:
    return [price] * days


def connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    ensure_schema(con)
    return con


def load(con: duckdb.DuckDBPyConnection, offers: Iterable[Offer], start: date = START) -> None:
    rows = [row for offer in offers for row in offer.rows(start)]
    if rows:
        insert(con, rows)


def publish(con: duckdb.DuckDBPyConnection, at: datetime = PUBLISHED_AT):
    """Build the index's models (in full) and append the index's new rows."""
    build_only(con, "intermediate.int_index_offer_days", full=True)
    return publish_index(con, at)


def series_rows(con: duckdb.DuckDBPyConnection, series_id: str) -> list[dict]:
    cursor = con.execute("select * from marts.price_index where series_id = ? "
                         "order by index_date", [series_id])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
