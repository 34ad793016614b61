"""gpuprices from Python: the published database as pandas DataFrames.

    >>> from pipelines.api import prices, history, signals, claims
    >>> prices(card="A100-80GB", region="北京", period="hour").head()
    >>> history(card="4090", kind="spot", since="2026-11-01")
    >>> signals("spot_discount", card="A100")
    >>> claims()

Every function opens `data/prices.db` (or `<data_dir>/prices.db`; `GPUPRICES_DATA_DIR` moves the
default) read-only and closes it before returning, so it never blocks a run. The filters are the
CLI's, read the same way (pipelines/cli/filters.py, pipelines/lookup.py): `card` is a canonical
model (A100-80GB), a vendor spelling (a100-80g, RTX 4090D) or a family (A100, 4090), a slice
(A100 1/4) also filters the fraction; `region` a province, state, city, country code or vendor
region code (北京, Beijing, Inner Mongolia, US, eastus); `vendor` part of a vendor or source name;
`kind` on_demand | spot | reserved and `period` hour | day | week | month | year, other spellings
(按需, 竞价, 包月, ...) included; `max_price` CNY per GPU-hour. The column names are the marts'
(README, "Tables"; `select column_name, comment from duckdb_columns()` explains each).

Columns are typed: timestamps datetime64[ns, UTC], dates datetime64[ns], prices and ratios float64,
counts Int64, flags boolean (nullable: <NA> when a listing does not say), text object.

Every frame says where its prices come from: `frame.attrs["price_basis"]` maps each source (of its
rows, when it has a `source` column; else every source) to the same words the report shows
("live", "published prices as of 2026-05-13, replayed", "modeled snapshot: illustrative prices",
...; intermediate.int_source_price_basis), and prices() rows carry price_basis, prices_as_of and
price_basis_label. A modeled price is an illustration, not a quote.

Errors: NoDataError (a LookupError) when there is no published database yet or it lacks the
table (run `make run`); UnknownValueError (a ValueError) for a card, region, vendor, kind, period
or signal nobody knows, its message listing the known ones. A filter that matches nothing
returns an empty DataFrame, with the columns.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import click
import pandas as pd

from pipelines.cli import filters
from pipelines.cli.filters import (
    Filter,
    card_filter,
    held_filter,
    region_filter,
    signal_scope,
    sql_in,
)
from pipelines.cli.options import KINDS, PERIODS
from pipelines.cli.published import open_published
from pipelines.warehouse.sql_files import source_price_labels, sql_text

SORTS = {"price": "price_per_gpu_hour_cny, vendor, gpu_model, region_code",
         "vendor": "vendor, gpu_model, price_per_gpu_hour_cny, region_code"}
# The signal marts and the column that says which day (or month) a row is about: the marts
# `gpuprices signals` shows.
SIGNALS = {"slice_to_whole_ratio": "day", "regional_discount": "day", "spot_discount": "day",
           "monthly_vs_hourly_saving": "day", "multi_gpu_discount": "day",
           "month_end_dip": "month"}
_INTEGER_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
                  "UINTEGER", "UBIGINT")


class NoDataError(LookupError):
    """No published database yet, or one without the table asked for."""


class UnknownValueError(ValueError):
    """A card, region, vendor, kind, period or signal nobody knows; the message lists the known
    ones."""


def database_path(data_dir: str | Path | None = None) -> Path:
    """The published database: `<data_dir>/prices.db` (default: data/, or $GPUPRICES_DATA_DIR)."""
    from spiders.layout import data_dir as default_data_dir

    return default_data_dir(data_dir) / "prices.db"


@contextmanager
def _published(data_dir: str | Path | None, *tables: str) -> Iterator:
    with open_published(database_path(data_dir), tables, NoDataError, OSError) as con:
        yield con


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


def _choice(choices: click.Choice, value: str, name: str) -> str:
    try:
        return choices.convert(value, None, None)
    except click.BadParameter as exc:
        raise UnknownValueError(f"{name}: {exc.message}") from None


def _offer_filter(con, card: str | None, region: str | None, kind: str | None,
                  period: str | None, vendor: str | None,
                  max_price: float | None = None) -> Filter:
    """The CLI's --card/--region/--kind/--period/--vendor/--max-price, as predicates over
    marts.latest_prices."""
    found = Filter()
    try:
        if card:
            card_filter(card, found)
        if region:
            region_filter(con, region, found)
        if vendor:
            filters.vendor_filter(con, vendor, found)
    except click.BadParameter as exc:
        raise UnknownValueError(exc.message) from None
    if kind:
        found.add("offer_kind = ?", [_choice(KINDS, kind, "kind")])
    if period:
        found.add("billing_period = ?", [_choice(PERIODS, period, "period")])
    if max_price is not None:
        found.add("price_per_gpu_hour_cny <= ?", [float(max_price)])
    return found


def prices(card: str | None = None, region: str | None = None, kind: str | None = None,
           period: str | None = None, vendor: str | None = None,
           max_price: float | None = None, sort: str = "price", limit: int | None = None,
           data_dir: str | Path | None = None, include_held: bool = False) -> pd.DataFrame:
    """The latest price of every offer (marts.latest_prices), filtered and sorted as `gpuprices
    prices` does (sort: "price", cheapest per GPU-hour in CNY first, or "vendor"); at most
    `limit` rows (None: all). A price held back as a possible outlier (marts.price_outliers) is
    left out unless `include_held`.

    >>> prices(card="A100-80GB", region="Inner Mongolia", period="month", max_price=20)
    """
    if sort not in SORTS:
        raise UnknownValueError(f"sort: {sort!r} is not one of {', '.join(SORTS)}")
    with _published(data_dir, "marts.latest_prices", "marts.price_outliers") as con:
        found = _offer_filter(con, card, region, kind, period, vendor, max_price)
        if not include_held:
            held_filter(con, found)
        sql = (f"select * from marts.latest_prices where {found.sql} "
               f"order by {SORTS[sort]}, offer_id")
        if limit is not None:
            sql += f" limit {int(limit)}"
        return _frame(con, sql, found.params)


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
    with _published(data_dir, "marts.latest_prices", "marts.price_history") as con:
        found = _offer_filter(con, card, region, kind, period, vendor)
        where, params = [f"offer_id in (select offer_id from marts.latest_prices "
                         f"where {found.sql})"], list(found.params)
        for bound, op in ((since, ">="), (until, "<=")):
            if bound is not None:
                where.append(f"local_date {op} ?::date")
                params.append(str(bound))
        return _frame(con, f"select * from marts.price_history where {' and '.join(where)} "
                           "order by gpu_model, vendor, offer_id, local_date", params)


def signals(name: str, card: str | None = None, region: str | None = None,
            every_day: bool = False, data_dir: str | Path | None = None) -> pd.DataFrame:
    """One signal mart (SIGNALS: slice_to_whole_ratio, regional_discount, spot_discount,
    monthly_vs_hourly_saving, multi_gpu_discount, month_end_dip), every column, narrowed by
    card and region as `gpuprices signals` narrows it (regional_discount by province in China,
    by country elsewhere); its latest day (month for month_end_dip) unless `every_day`.

    >>> signals("spot_discount", card="A100")
    """
    if name not in SIGNALS:
        raise UnknownValueError(f"unknown signal {name!r}; known: {', '.join(SIGNALS)}")
    mart, day = f"marts.{name}", SIGNALS[name]
    with _published(data_dir, "marts.latest_prices", mart) as con:
        columns = [c for (c,) in con.execute(sql_text(filters.__file__, "mart_columns"),
                                             {"mart": name}).fetchall()]
        where: list[str] = [] if every_day else [f"{day} = (select max({day}) from {mart})"]
        params: list = []
        if card or region:
            found = _offer_filter(con, card, region, None, None, None)
            models, codes, groups = signal_scope(con, found)
            if card and "gpu_model" in columns:
                where.append(sql_in("gpu_model", models) if models else "false")
                params += models
            if region:
                column, values = ("region_code", codes) if "region_code" in columns \
                    else ("region_group", groups)
                where.append(sql_in(column, values) if values else "false")
                params += values
        return _frame(con, f"select * from {mart} where {' and '.join(where) or 'true'} "
                           f"order by {day}", params)


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
    with _published(data_dir, "marts.market_claims") as con:
        return _frame(con, "select * from marts.market_claims", [])
