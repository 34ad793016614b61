"""Publishing the price index: read the rules and inputs the SQL models built, chain every series
(method.py, chain.py) and append the rows no run has published yet to `marts.price_index`, in one
transaction. Rows already there are never updated or deleted (the insert skips their keys)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

import duckdb
import pandas as pd

from pipelines.index.chain import INDEX_COLUMNS, SERIES_COLUMNS, chain_rows
from pipelines.index.method import Rules, series_days
from pipelines.warehouse.db import transaction
from pipelines.warehouse.sql_files import sql_text
from pipelines.warehouse.tables import INDEX_TABLE

__all__ = ["INDEX_TABLE", "Publication", "ensure_index_table", "new_rows", "publish_index",
           "read_inputs", "read_rules", "rows_from_inputs"]


@dataclass
class Publication:
    """What one publication did: rows appended per series, and the series left empty."""
    rows: dict[str, int] = field(default_factory=dict)
    series: int = 0

    @property
    def appended(self) -> int:
        return sum(self.rows.values())

    def summary(self) -> str:
        moved = ", ".join(f"{s} +{n}" for s, n in sorted(self.rows.items()) if n)
        return (f"price index: {self.appended} rows published over {self.series} series"
                + (f" ({moved})" if moved else " (no closed day without its row)"))


def ensure_index_table(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(sql_text(__file__, "create_price_index"))


def read_rules(con: duckdb.DuckDBPyConnection) -> Rules:
    cursor = con.execute(sql_text(__file__, "index_rules"))
    names = [d[0] for d in cursor.description]
    return Rules(**dict(zip(names, cursor.fetchone(), strict=True)))


def _complete(days: pd.DataFrame, closed_through, published: set) -> bool:
    """Whether every day the series would publish (its first usable day through its last listed
    one, up to `closed_through`) has its row already: most runs of a day close no day."""
    closed = days[days["index_date"] <= closed_through]
    usable = closed[closed["fresh"] & ~closed["held"]]
    if usable.empty:
        return True
    first, last = usable["index_date"].min(), closed["index_date"].max()
    return all(first + timedelta(days=i) in published for i in range((last - first).days + 1))


def rows_from_inputs(inputs: pd.DataFrame, published: pd.DataFrame, rules: Rules,
                     published_at: datetime) -> tuple[pd.DataFrame, Publication]:
    """The rows to append (INDEX_COLUMNS) from the inputs (sql/index_inputs.sql's columns) and
    the rows already published by this method (sql/published_chain.sql's): pure, so a method
    can be recomputed in memory on any database's inputs without publishing."""
    report = Publication()
    rows: list[dict] = []
    published_by = dict(tuple(published.groupby("series_id"))) if len(published) else {}
    for series_id, days in inputs.groupby("series_id", sort=True):
        report.series += 1
        first = days.iloc[0]
        series = {c: first[c] for c in SERIES_COLUMNS}
        closed_through = first["market_last_date"] - timedelta(days=1)
        already = published_by.get(series_id, published.iloc[0:0])
        if _complete(days, closed_through, set(already["index_date"])):
            report.rows[series_id] = 0     # every closed day has its row: nothing to compute
            continue
        computed, replicate = series_days(series_id, days, closed_through, rules)
        series_rows = chain_rows(series, computed, replicate, already, rules, published_at)
        report.rows[series_id] = len(series_rows)
        rows += series_rows
    return pd.DataFrame(rows, columns=list(INDEX_COLUMNS)), report


def _dates(frame: pd.DataFrame) -> pd.DataFrame:
    for column in ("index_date", "market_last_date", "base_date"):
        if column in frame:
            frame[column] = pd.to_datetime(frame[column]).dt.date
    return frame


def read_inputs(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every series' offer-days (intermediate.int_index_offer_days), as the method reads them."""
    return _dates(con.execute(sql_text(__file__, "index_inputs")).df())


def new_rows(con: duckdb.DuckDBPyConnection, published_at: datetime) -> tuple[pd.DataFrame,
                                                                               Publication]:
    """The rows to append (INDEX_COLUMNS), computed from the current inputs and the rows already
    published; nothing is written."""
    ensure_index_table(con)
    rules = read_rules(con)
    published = _dates(con.execute(sql_text(__file__, "published_chain"),
                                   {"method_version": rules.method_version}).df())
    return rows_from_inputs(read_inputs(con), published, rules, published_at)


def publish_index(con: duckdb.DuckDBPyConnection, published_at: datetime) -> Publication:
    """Append every closed day's rows that are not published yet, in one transaction."""
    with transaction(con):
        frame, report = new_rows(con, published_at)
        if len(frame):
            con.register("new_index_rows", frame)
            try:
                con.execute(sql_text(__file__, "insert_index_rows"))
            finally:
                con.unregister("new_index_rows")
    return report
