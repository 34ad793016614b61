"""The price index on real histories (`make truth-real`): no true path is known there, so each
published series' level (percent of a base day) is scored against a regression over all the
history's days (index_reference: time-product dummy, vendors equal on each day), rebased at the
same day, beside the plain listing median's error on the same days. A history is the source's
prefix (gpu-rental-prices' daily snapshots, gcp-pricing's archived versions; 'live' for sources
crawled directly); its days are the span its closes cover.

    python -m tests.workshop.truth.real_index [DB]   # the figures of gpi-2 and the current
                                                     # method, recomputed in memory, side by side
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pandas as pd

from pipelines.index.method import Rules
from pipelines.index.publish import read_inputs, rows_from_inputs
from pipelines.warehouse.sql_files import sql_text
from tests.workshop.truth.index_reference import day_effects

REAL_DB = Path("/work/realdb/prices.db")
RULES_SQL = Path(__file__).resolve().parents[3] / "dbt_like_sql/intermediate/int_index_rules.sql"
CHAIN_COLUMNS = ["series_id", "index_date", "chain_level", "base_date", "base_level"]


def errors(closes: pd.DataFrame, levels: pd.DataFrame) -> pd.DataFrame:
    """Per history, series and day with a level: the index's and the listing median's error in
    pp against the reference, all three as percent of the series' base day (the level over
    `base_level`, the base day's listing median) when the history holds that day, else of the
    history's first day with a level."""
    out = []
    for history, spans in closes.groupby("history"):
        window = closes[closes["index_date"].isin(set(spans["index_date"]))]
        for series_id in spans["series_id"].unique():
            reference = day_effects(window[window["series_id"] == series_id])
            rows = levels[(levels["series_id"] == series_id)
                          & levels["index_date"].isin(reference.index)]
            if rows.empty:
                continue
            base_day = rows["base_date"].iloc[0]
            if base_day in reference.index:
                base_level = base_median = rows["base_level"].iloc[0]
            else:
                base_day, base_level, base_median = rows.iloc[0][
                    ["index_date", "index_level", "listing_median"]]
            for row in rows.itertuples():
                truth = 100 * reference[row.index_date] / reference[base_day]
                out.append({
                    "history": history, "series_id": series_id, "index_date": row.index_date,
                    "index_error_pp": 100 * row.index_level / base_level - truth,
                    "median_error_pp": 100 * row.listing_median / base_median - truth})
    return pd.DataFrame(out, columns=["history", "series_id", "index_date", "index_error_pp",
                                      "median_error_pp"])


def summary(closes: pd.DataFrame, errs: pd.DataFrame) -> dict:
    """Per history: series-days scored, the index's and the listing median's error (median and
    max abs pp) and the worst day."""
    out = {}
    for history, spans in closes.groupby("history"):
        got = errs[errs["history"] == history]
        figures: dict = {"days": int(spans["index_date"].nunique()),
                         "series": int(spans["series_id"].nunique()), "scored": len(got)}
        if len(got):
            index, median = got["index_error_pp"].abs(), got["median_error_pp"].abs()
            worst = got.loc[index.idxmax()]
            figures.update({
                "index_error_pp_median": round(float(index.median()), 3),
                "index_error_pp_max": round(float(index.max()), 3),
                "median_error_pp_median": round(float(median.median()), 3),
                "median_error_pp_max": round(float(median.max()), 3),
                "worst": f"{worst['series_id']} {worst['index_date']}"})
        out[history] = figures
    return out


def _closes(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    closes = con.execute(sql_text(__file__, "real_index_closes")).df()
    closes["index_date"] = pd.to_datetime(closes["index_date"]).dt.date
    return closes


def _levels(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame[frame["index_level"].notna()].copy()
    for column in ("index_date", "base_date"):
        frame[column] = pd.to_datetime(frame[column]).dt.date
    return frame


def score(con: duckdb.DuckDBPyConnection) -> dict:
    """The published index (its latest method) on each real history against the reference."""
    closes = _closes(con)
    levels = _levels(con.execute(sql_text(__file__, "real_index_levels")).df())
    method = levels["method_version"].iloc[0] if len(levels) else None
    return {"method_version": method, "histories": summary(closes, errors(closes, levels))}


def current_rules() -> Rules:
    """The rules of this checkout (dbt_like_sql/intermediate/int_index_rules.sql, their home)."""
    cursor = duckdb.connect().execute(RULES_SQL.read_text(encoding="utf-8").split("*/", 1)[1])
    names = [d[0] for d in cursor.description]
    return Rules(**dict(zip(names, cursor.fetchone(), strict=True)))


def recompute(con: duckdb.DuckDBPyConnection, rules: Rules) -> pd.DataFrame:
    """Every series' rows under `rules` from the database's inputs, in memory (none published)."""
    nothing = pd.DataFrame(columns=CHAIN_COLUMNS)
    frame, _ = rows_from_inputs(read_inputs(con), nothing, rules, datetime.now(UTC))
    return _levels(frame)


def compare(con: duckdb.DuckDBPyConnection, methods: dict[str, Rules]) -> dict:
    closes = _closes(con)
    return {name: summary(closes, errors(closes, recompute(con, rules)))
            for name, rules in methods.items()}


def main(argv: list[str]) -> None:
    con = duckdb.connect(argv[0] if argv else str(REAL_DB), read_only=True)
    rules = current_rules()
    published = score(con)
    figures = {f"published {published['method_version']}": published["histories"],
               **compare(con, {rules.method_version: rules})}
    print(f"{'method':16} {'history':20} {'days':>5} {'scored':>7} {'index pp med/max':>18} "
          f"{'median pp med/max':>18}  worst")
    for name, histories in figures.items():
        for history, f in histories.items():
            index = (f"{f['index_error_pp_median']:.2f} / {f['index_error_pp_max']:.2f}"
                     if f["scored"] else "–")
            median = (f"{f['median_error_pp_median']:.2f} / {f['median_error_pp_max']:.2f}"
                      if f["scored"] else "–")
            print(f"{name:16} {history:20} {f['days']:5d} {f['scored']:7d} {index:>18} "
                  f"{median:>18}  {f.get('worst', '')}")


if __name__ == "__main__":
    main(sys.argv[1:])
