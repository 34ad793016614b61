"""The history charts' honesty on a real published database (`make truth-real`): what the lines
of marts.card_history (one line per card and vendor, or per vendor and record) and
marts.chart_points (the market medians) draw, counted against what happened:

* interleavings: consecutive points of one line read from different records (two archives, an
  archive and the live crawls): a line that alternates between tables that disagree;
* gap crossings: a line drawn between two points further apart than the cadence of the records
  behind them (intermediate.int_source_calendars' SQL, run here as a subquery, so a database
  built before that model is scored the same way);
* unmarked set changes: consecutive market points whose number of vendors differs (a lower
  bound of the set's changes: a swap keeps the count) where the point does not say so;
* axes without a year: charts the report draws whose days cross a year and whose tick labels
  do not carry one (pipelines.report.charts.date_axis).

A database whose marts predate the record columns is scored with each point's records
resolved from intermediate.int_offer_daily (sql/real_history_*_unsourced.sql), so the figures
before and after the change count the same things. Run on a database alone:
`python tests/workshop/truth/real_history.py <prices.db>` (with PYTHONPATH set to the checkout
whose report code draws the charts)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from datetime import date
from pathlib import Path

import duckdb

from pipelines.report.card_history import MAX_CARDS
from pipelines.report.charts import FAMILIES, date_axis

SQL = Path(__file__).resolve().parent / "sql"
CALENDARS_MODEL = (Path(__file__).resolve().parents[3] / "dbt_like_sql" / "intermediate"
                   / "int_source_calendars.sql")
YEAR_DIRECTIVES = ("%Y", "%y")


def _sql(name: str) -> str:
    return (SQL / f"{name}.sql").read_text(encoding="utf-8")


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> set[str]:
    schema, name = table.split(".")
    return {r[0] for r in con.execute(
        "select column_name from information_schema.columns "
        "where table_schema = ? and table_name = ?", [schema, name]).fetchall()}


def _points(con: duckdb.DuckDBPyConnection, name: str) -> list[dict]:
    # the model's body, without its description and header comments
    text = re.sub(r"/\*.*?\*/", "", CALENDARS_MODEL.read_text(encoding="utf-8"), flags=re.S)
    calendars = re.sub(r"^--.*$", "", text, flags=re.M).strip()
    cursor = con.execute(_sql(name).replace("{calendars}", calendars))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def line_figures(points: Iterable[dict]) -> dict:
    """Interleavings, gap crossings and unmarked vendor-count changes over points ordered by
    line and day (columns: line, day, records, max_gap_days, starts_segment, vendors, marked)."""
    figures = {"lines": 0, "points": 0, "joins_drawn": 0, "interleavings": 0,
               "gap_crossings": 0, "unmarked_set_changes": 0}
    previous = None
    for point in points:
        figures["points"] += 1
        if previous is None or previous["line"] != point["line"]:
            figures["lines"] += 1
            previous = point
            continue
        drawn = not point["starts_segment"]
        figures["joins_drawn"] += drawn
        figures["interleavings"] += set(previous["records"]) != set(point["records"])
        gap = (point["day"] - previous["day"]).days
        cadence = max(previous["max_gap_days"] or 1, point["max_gap_days"] or 1)
        figures["gap_crossings"] += drawn and gap > cadence
        changed = (point["vendors"] is not None and previous["vendors"] != point["vendors"])
        figures["unmarked_set_changes"] += changed and not point["marked"]
        previous = point
    return figures


def axis_figures(spans: Iterable[tuple[str, date, date]]) -> dict:
    """The charts whose days cross a year, and those of them whose ticks say no year."""
    crossing = [(chart, first, last) for chart, first, last in spans if first.year != last.year]
    unlabelled = [chart for chart, first, last in crossing
                  if not any(d in date_axis([first, last])["tickformat"]
                             for d in YEAR_DIRECTIVES)]
    return {"charts_crossing_a_year": len(crossing), "axes_without_year": len(unlabelled),
            "axes_without_year_charts": unlabelled[:10]}


def score(con: duckdb.DuckDBPyConnection) -> dict:
    """The history charts' figures on a published database (read-only)."""
    sourced = "source" in _columns(con, "marts.card_history")
    calendared = "calendar" in _columns(con, "marts.chart_points")
    cards = line_figures(_points(con, "real_history_card_points" if sourced
                                 else "real_history_card_points_unsourced"))
    market = line_figures(_points(con, "real_history_market_points" if calendared
                                  else "real_history_market_points_uncalendared"))
    spans = con.execute(_sql("real_history_chart_spans"), [MAX_CARDS, list(FAMILIES)]).fetchall()
    axes = axis_figures(spans)
    return {"interleavings": cards["interleavings"] + market["interleavings"],
            "gap_crossings": cards["gap_crossings"] + market["gap_crossings"],
            "unmarked_set_changes": market["unmarked_set_changes"],
            "axes_without_year": axes["axes_without_year"],
            "card_lines": {k: v for k, v in cards.items() if k != "unmarked_set_changes"},
            "market_lines": market, "axes": axes,
            "lines_name_their_record": sourced and calendared}


if __name__ == "__main__":
    with duckdb.connect(sys.argv[1], read_only=True) as connection:
        print(json.dumps(score(connection), indent=1, default=str))
