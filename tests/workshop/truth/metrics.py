"""Scores of the signals against the simulator's truth: pure functions over the rows the SQL in
`sql/` returns from a simulated database, so each one is tested on hand-made rows."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import duckdb
import pandas as pd

from pipelines.verdicts import HOLDS, VERDICTS
from pipelines.warehouse.sql_files import sql_text

FALSE_POSITIVE_CATEGORIES = ("noise", "trend", "churn", "fx")


def query(con: duckdb.DuckDBPyConnection, name: str) -> pd.DataFrame:
    """Run `sql/<name>.sql` on a simulated database."""
    return con.execute(sql_text(__file__, name)).df()


def _share(flags: Iterable) -> float | None:
    values = [bool(v) for v in flags]
    return sum(values) / len(values) if values else None


def _holds(verdicts: pd.Series) -> list[bool]:
    return [v == HOLDS for v in verdicts]


def dip_recall(groups: pd.DataFrame) -> dict[str, float | None]:
    """Dip size (as injected, '%g') -> share of the dipped groups whose recurring verdict holds."""
    dipped = groups[groups["category"] == "dip"]
    return {f"{size:g}": _share(_holds(part["dip_verdict"]))
            for size, part in sorted(dipped.groupby("dip_size_pct"), key=lambda kv: kv[0])}


def false_positive_rates(groups: pd.DataFrame) -> dict[str, float | None]:
    """Category -> share of its groups (no dip injected) whose recurring verdict says it holds."""
    return {category: _share(_holds(groups.loc[groups["category"] == category, "dip_verdict"]))
            for category in FALSE_POSITIVE_CATEGORIES}


def _month_share(part: pd.DataFrame, column: str) -> float | None:
    months = int(part["complete_months"].sum())
    return float(part[column].sum()) / months if months else None


def month_recall(groups: pd.DataFrame) -> dict[str, float | None]:
    """Dip size -> share of the dipped groups' complete months whose own verdict holds (what a
    single month can say: "this month-end dipped")."""
    dipped = groups[groups["category"] == "dip"]
    return {f"{size:g}": _month_share(part, "months_holding")
            for size, part in sorted(dipped.groupby("dip_size_pct"), key=lambda kv: kv[0])}


def month_false_positive_rates(groups: pd.DataFrame) -> dict[str, float | None]:
    """Category -> share of its complete months (no dip injected) whose own verdict holds."""
    return {category: _month_share(groups[groups["category"] == category], "months_holding")
            for category in FALSE_POSITIVE_CATEGORIES}


def verdict_shares(groups: pd.DataFrame) -> dict[str, dict[str, float]]:
    """'dip' and 'no dip' -> the share of their groups given each verdict: how often the mart
    says "not enough evidence" where it cannot yet tell, and never "does not hold" on a dip."""
    out = {}
    for label, part in (("dip", groups[groups["category"] == "dip"]),
                        ("no dip", groups[groups["category"] != "dip"])):
        if len(part):
            out[label] = {v: round(float((part["dip_verdict"] == v).mean()), 4)
                          for v in VERDICTS}
    return out


def group_counts(groups: pd.DataFrame) -> dict[str, int]:
    counts = groups["category"].value_counts()
    return {category: int(counts.get(category, 0))
            for category in ("dip", *FALSE_POSITIVE_CATEGORIES)}


def error_summary(errors: Sequence[float]) -> dict[str, float | None]:
    """Median, 95th percentile and maximum of absolute errors (None when there are none)."""
    values = sorted(float(e) for e in errors if e is not None and not math.isnan(float(e)))
    if not values:
        return {"median": None, "p95": None, "max": None, "rows": 0}
    p95 = values[min(len(values) - 1, math.ceil(0.95 * len(values)) - 1)]
    return {"median": float(pd.Series(values).median()), "p95": p95, "max": values[-1],
            "rows": len(values)}


def share_within(errors: Sequence[float], bound: float) -> float | None:
    """The share of errors at most `bound` (None when there are none)."""
    values = [float(e) for e in errors if e is not None and not math.isnan(float(e))]
    return sum(v <= bound for v in values) / len(values) if values else None


def regional_summary(rows: pd.DataFrame) -> dict[str, float | None]:
    """The regional error over every scored row (sql/regional_errors.sql), over the rows of two or
    more paired vendors, and the share of rows whose error is within the error the row itself
    states (error_bound_pp)."""
    if "error_pp" not in rows or rows.empty:
        return error_summary([])
    errors = rows["error_pp"].tolist()
    several = rows.loc[rows["vendors_paired"] >= 2, "error_pp"].tolist()
    return {**error_summary(errors),
            "share_within_1_5_pp": share_within(errors, 1.5),
            "max_two_or_more_vendors": error_summary(several)["max"],
            "share_within_stated_bound": share_within(
                (rows["error_pp"] - rows["error_bound_pp"]).tolist(), 0.0)}


def ratio_errors(rows: pd.DataFrame) -> dict[str, dict]:
    """Measure ('slice', 'server', 'spot', 'monthly') -> relative error of the mart's ratio against
    the injected one, and the share of pairs made with the reference the simulator priced from."""
    out = {}
    for measure, part in rows.groupby("measure"):
        relative = (part["measured_ratio"] / part["injected_ratio"] - 1).abs()
        same = _share(v is True or v == 1 for v in part["same_reference"])
        out[measure] = {**error_summary(relative.tolist()), "same_reference": same}
    return out


def claims_summary(claims: pd.DataFrame) -> dict[str, object]:
    with_interval = claims["ci_low"].notna() & claims["ci_high"].notna()
    return {"claims_total": len(claims), "claims_with_interval": int(with_interval.sum()),
            "verdicts": {str(k): int(v) for k, v in claims["verdict"].value_counts().items()}}
