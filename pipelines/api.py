"""gpuprices from Python: the published database as pandas DataFrames.

    >>> from pipelines.api import prices, history, signals, claims
    >>> prices(card="A100-80GB", region="北京", period="hour").head()
    >>> history(card="4090", kind="spot", since="2026-11-01")
    >>> signals("spot_discount", card="A100")
    >>> claims()
    >>> index(card="H100", market="world", kind="spot")

Every function opens `data/prices.db` (or `<data_dir>/prices.db`; `GPUPRICES_DATA_DIR` moves the
default) read-only and closes it before returning, so it never blocks a run. The queries and
filters are the CLI's, from the same read layer (pipelines/query/, pipelines/lookup.py): `card`
is a canonical model (A100-80GB), a vendor spelling (a100-80g, RTX 4090D) or a family (A100,
4090), a slice (A100 1/4) also filters the fraction; `region` a province, state, city, country
code or vendor region code (北京, Beijing, Inner Mongolia, US, eastus); `vendor` part of a vendor
or source name; `kind` on_demand | spot | reserved and `period` hour | day | week | month |
quarter | year, other spellings (按需, 竞价, 包月, ...) included; `max_price` CNY per GPU-hour.
The column names are the marts' (README, "Tables"; `select column_name, comment from
duckdb_columns()` explains each).

Columns are typed: timestamps datetime64[ns, UTC], dates datetime64[ns], prices and ratios float64,
counts Int64, flags boolean (nullable: <NA> when a listing does not say), text object.

Every frame says where its prices come from: `frame.attrs["price_basis"]` maps each source (of its
rows, when it has a `source` column; else every source) to the same words the report shows
("live", "published prices as of 2026-05-13, replayed", "modeled snapshot: illustrative prices",
...; intermediate.int_source_price_basis), and prices() rows carry price_basis, prices_as_of and
price_basis_label. A modeled price is an illustration, not a quote. prices() rows also carry
price_as_of (the date the price held: prices_as_of, else the day it was last seen, UTC) and
price_age_days (days from then to today, UTC); prices older than the horizon (180 days), and
offers their record (crawled source or archive) no longer lists, are left out unless `max_age`
("all", or a number of days) widens it, and `frame.attrs` says how many were (`aged_out`,
`delisted`, in words `left_out`) and, when most of the prices are older than the horizon, says so
(`old_prices`).

Errors: NoDataError (a LookupError) when there is no published database yet or it lacks the
table (run `make run`); UnknownValueError (a ValueError) for a card, region, vendor, kind, period
or signal nobody knows, its message listing the known ones. A filter that matches nothing
returns an empty DataFrame, with the columns.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pandas as pd

from pipelines.query.ages import aged_out_note, max_age_days, old_prices_note
from pipelines.query.errors import NoDataError, UnknownValueError
from pipelines.query.filters import offer_filter
from pipelines.query.index import INDEX_TABLES, index_query
from pipelines.query.prices import (
    LATEST_PRICES_TABLES,
    latest_prices_query,
    price_history_query,
    price_order,
)
from pipelines.query.published import database_path, open_published
from pipelines.query.signals import (
    SIGNALS,
    mart_columns,
    signal_named,
    signal_query,
    signal_scope,
)
from pipelines.warehouse.sql_files import source_price_labels

__all__ = ["SIGNALS", "NoDataError", "UnknownValueError", "claims", "database_path", "history",
           "index", "prices", "signals"]

_INTEGER_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
                  "UINTEGER", "UBIGINT")


def _frame(con, sql: str, params: list) -> pd.DataFrame:
    """The query's rows with typed columns, by the DuckDB type of each."""
    cursor = con.execute(sql, params)
    types = {d[0]: str(d[1]).upper() for d in cursor.description}
    frame = cursor.df()
    for column, kind in types.items():
        values = frame[column]
        if kind.startswith("TIMESTAMP"):
            values = pd.to_datetime(values, utc=True)
            frame[column] = values.dt.tz_convert("UTC").astype("datetime64[ns, UTC]")
        elif kind == "DATE":
            frame[column] = pd.to_datetime(values).astype("datetime64[ns]")
        elif kind.startswith(("DECIMAL", "DOUBLE", "FLOAT", "REAL")):
            frame[column] = pd.to_numeric(values).astype("float64")
        elif kind in _INTEGER_TYPES:
            frame[column] = values.astype("Int64")
        elif kind == "BOOLEAN":
            frame[column] = values.astype("boolean")
    frame.attrs["price_basis"] = _price_basis(con, frame)
    return frame


def _price_basis(con, frame: pd.DataFrame) -> dict[str, str]:
    """{source: where its prices come from, in words} for the frame's sources (every source when
    it has no `source` column); {} for a database made before sources recorded it."""
    labels = source_price_labels(con)
    shown = set(frame["source"].dropna()) if "source" in frame.columns else None
    return {source: label for source, label in labels.items() if shown is None or source in shown}


def prices(card: str | None = None, region: str | None = None, kind: str | None = None,
           period: str | None = None, vendor: str | None = None,
           max_price: float | None = None, sort: str = "price", limit: int | None = None,
           data_dir: str | Path | None = None, include_held: bool = False,
           max_age: int | str | None = None) -> pd.DataFrame:
    """The latest price of every offer (marts.latest_prices), filtered and sorted as `gpuprices
    prices` does (sort: "price", cheapest per GPU-hour in CNY first, or "vendor"); at most
    `limit` rows (None: all), each with its price_as_of and price_age_days. A price held back as
    a possible outlier (marts.price_outliers) is left out unless `include_held`; one older than
    `max_age` days (None: the horizon, 180 days; "all": however old) is left out, and
    `frame.attrs["aged_out"]` counts them, and so is one its record no longer lists (last seen
    over a week before the record's newest data; "all" keeps it): `frame.attrs["delisted"]`;
    `frame.attrs["left_out"]` says both in words; `frame.attrs["old_prices"]` is the line `gpuprices
    prices` opens with when most of the prices are older than the horizon (else None).

    >>> prices(card="A100-80GB", region="Inner Mongolia", period="month", max_price=20)
    >>> prices(card="H100", max_age="all")
    """
    price_order(sort)   # an unknown sort says so before the database is opened
    max_age_days(max_age)   # and so does an unknown max_age
    with open_published(LATEST_PRICES_TABLES, data_dir) as con:
        query = latest_prices_query(con, card, region, kind, period, vendor, max_price, sort,
                                    include_held, limit, max_age)
        frame = _frame(con, query.sql, query.params)
    frame.attrs |= {"aged_out": query.aged_out, "delisted": query.delisted,
                    "left_out": aged_out_note(query.aged_out, query.max_age, query.delisted),
                    "old_prices": old_prices_note(query.ages)}
    return frame


def history(card: str | None = None, region: str | None = None, kind: str | None = None,
            period: str | None = None, vendor: str | None = None,
            since: str | date | None = None, until: str | date | None = None,
            data_dir: str | Path | None = None) -> pd.DataFrame:
    """The daily price history (marts.price_history: one row per offer and local day, open,
    close, low and high as listed and per GPU-hour in CNY and USD) of the offers the filters
    match, from `since` to `until` (local days, inclusive; ISO dates or dates), ordered by offer
    and day.

    >>> history(card="A100-80GB", region="北京", since="2026-11-01")
    """
    with open_published(("marts.latest_prices", "marts.price_history"), data_dir) as con:
        found = offer_filter(con, card, region, kind, period, vendor)
        return _frame(con, *price_history_query(found, since, until))


def signals(name: str, card: str | None = None, region: str | None = None,
            every_day: bool = False, data_dir: str | Path | None = None) -> pd.DataFrame:
    """One signal mart (SIGNALS: slice_to_whole_ratio, regional_discount, spot_discount,
    monthly_vs_hourly_saving, multi_gpu_discount, month_end_dip), every column, narrowed by
    card and region as `gpuprices signals` narrows it (regional_discount by province in China,
    by country elsewhere); its latest day (month for month_end_dip) unless `every_day`.

    >>> signals("spot_discount", card="A100")
    """
    signal = signal_named(name)
    with open_published(("marts.latest_prices", signal.table), data_dir) as con:
        present = mart_columns(con, signal)
        found = offer_filter(con, card, region)
        scope = signal_scope(con, found, by_card=bool(card), by_region=bool(region))
        return _frame(con, *signal_query(signal, present, scope, every_day=every_day))


def claims(data_dir: str | Path | None = None) -> pd.DataFrame:
    """The market-claims scorecard (marts.market_claims): each claim, the median of its distinct
    offers with the interval of that median, the expected range and the verdict, as `gpuprices
    claims` shows it. `verdict` is one of pipelines.verdicts.VERDICTS (holds, does not hold, not
    enough evidence); without a verdict, `evidence_lacking` says what is lacking (too few offers,
    interval overlaps the range, illustrative prices only, no offer in scope),
    `distinct_offers_needed` how many distinct offers a verdict would need (null when the median
    sits on an edge), and `reason` says it in words.

    >>> claims()[["claim", "median_value", "verdict", "distinct_offers_needed"]]
    """
    with open_published(("marts.market_claims",), data_dir) as con:
        return _frame(con, "select * from marts.market_claims", [])


def index(card: str | None = None, market: str | None = None, kind: str | None = None,
          term: str | None = None, since: str | date | None = None,
          until: str | date | None = None, data_dir: str | Path | None = None) -> pd.DataFrame:
    """The price index (marts.price_index, docs/price-index.md): every published day of the
    series the filters name, from `since` to `until` (inclusive), ordered by series and day, as
    `gpuprices index --since` shows them. `card` as for prices (a series is a card class:
    A100-80GB, H100/H800 SXM, H100 PCIe, RTX4090 ...); `market` china (listed in CNY) or world
    (listed in USD); `kind` an offer kind; `term` a billing period (hour, month ...).
    `index_level` is null on a day without enough evidence (`evidence_lacking` says why).

    >>> index(card="A100-80GB", market="china", term="hour", since="2026-11-01")
    """
    with open_published(INDEX_TABLES, data_dir) as con:
        return _frame(con, *index_query(con, card, market, kind, term, since, until))
