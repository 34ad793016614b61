"""The real histories' own figures, which every other part reads against (`make truth-real`): per
archive whose dates are calendar dates, the vendors entering and leaving per day, the price moves
that reversed within 2 days, and the daily move distribution of the listing median (sql/real_*.sql).
No truth is known here: these describe the market the index, the charts and the pairs face."""

from __future__ import annotations

import duckdb
import pandas as pd

from pipelines.warehouse.sql_files import sql_text

# A listing median's daily move counts as large past this (relative): the index's movement scale.
LARGE_MOVE = 0.05


def _query(con: duckdb.DuckDBPyConnection, name: str) -> pd.DataFrame:
    return con.execute(sql_text(__file__, name)).df()


def _quantile(values: pd.Series, q: float) -> float | None:
    return None if values.empty else round(float(values.quantile(q)), 4)


def churn_figures(days: pd.DataFrame) -> dict:
    """Vendors entering and leaving per day of one archive (rows of real_vendor_churn.sql)."""
    return {"days": len(days), "vendors_median": _quantile(days["vendors"], 0.5),
            "entering_total": int(days["entering"].sum()),
            "leaving_total": int(days["leaving"].sum()),
            "days_with_entry_or_exit": int(((days["entering"] + days["leaving"]) > 0).sum()),
            "entering_max": int(days["entering"].max()) if len(days) else 0,
            "leaving_max": int(days["leaving"].max()) if len(days) else 0}


def reversal_figures(moves: pd.DataFrame) -> dict:
    """The moves of one archive's offers and how many reversed (rows of real_reversals.sql)."""
    reversed_moves = moves[moves["reversed"]]
    return {"moves": len(moves), "reversals": len(reversed_moves),
            "reversal_share": round(len(reversed_moves) / len(moves), 4) if len(moves) else None,
            "offers_with_reversal": int(reversed_moves["offer_id"].nunique())}


def median_move_figures(moves: pd.DataFrame) -> dict:
    """The distribution of one archive's listing-median moves, in % (real_median_moves.sql)."""
    size = moves["relative_move"].astype(float).abs() * 100
    return {"card_days": len(moves), "cards": int(moves["gpu_model"].nunique()),
            "abs_move_pct_median": _quantile(size, 0.5), "abs_move_pct_p90": _quantile(size, 0.9),
            "abs_move_pct_max": _quantile(size, 1.0),
            "share_over_5pct": round(float((size > LARGE_MOVE * 100).mean()), 4)
            if len(size) else None}


def score(con: duckdb.DuckDBPyConnection) -> dict:
    """Per calendar-dated archive: vendor churn, reversals and the listing median's moves."""
    churn, reversals = _query(con, "real_vendor_churn"), _query(con, "real_reversals")
    medians = _query(con, "real_median_moves")
    archives = sorted(set(churn["archive"]) | set(reversals["archive"]) | set(medians["archive"]))
    figures: dict = {}
    for archive in archives:
        figures[archive] = {
            "vendor_churn": churn_figures(churn[churn["archive"] == archive]),
            "reversals": reversal_figures(reversals[reversals["archive"] == archive]),
            "listing_median_moves": median_move_figures(medians[medians["archive"] == archive])}
    return figures
