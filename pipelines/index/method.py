"""The index method on one series (pure: frames in, frames out; docs/price-index.md), gpi-3.

Each usable close (fresh, not held, as listed) is matched against its offer's past
(matching.py: its last accepted close within a window, the days between imputed by the series'
change; a newcomer against its first closes' mean). A day's change is the geometric mean of the
relatives, each vendor's offers averaged first, so that every vendor weighs the same; a day
whose change is one vendor's move alone says so. The vendor-level bootstrap draws one Poisson(1)
weight per vendor and replicate (reweighing the point's relatives), seeded by the series and the
vendor, so a replicate keeps its weights from day to day (its path is a chained index of its
own) and a vendor that joins later leaves the others' weights as they were.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date

import numpy as np
import pandas as pd

from pipelines.index.matching import match_closes
from pipelines.verdicts import NOT_ENOUGH_EVIDENCE

ENOUGH = "enough"
ONE_VENDOR = "one vendor's move"      # a level whose change is one vendor's alone


@dataclass(frozen=True)
class Rules:
    """intermediate.int_index_rules, the one home of these figures."""
    method_version: str
    max_relative: float
    stale_after_hours: int
    min_vendors: int
    match_window_days: int
    entry_days: int
    coverage_days: int
    bootstrap_replicates: int
    interval_level: float

    @property
    def quantiles(self) -> tuple[float, float]:
        tail = (1 - self.interval_level) / 2
        return tail, 1 - tail


def vendor_weights(series_id: str, vendors: list[str], rules: Rules) -> np.ndarray:
    """(replicates, vendors) Poisson(1) weights, each vendor's from a seed of its own."""
    columns = []
    for vendor in vendors:
        seed = hashlib.sha256(f"{rules.method_version}|{series_id}|{vendor}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(seed[:8], "big"))
        columns.append(rng.poisson(1.0, rules.bootstrap_replicates))
    return np.array(columns, dtype=float).T.reshape(rules.bootstrap_replicates, len(vendors))


def series_days(series_id: str, days: pd.DataFrame, closed_through: date,
                rules: Rules) -> tuple[pd.DataFrame, np.ndarray]:
    """One row per calendar day from the series' first usable day through its last listed day
    (at most `closed_through`): the day's point change (log), its evidence and coverage, the
    listing median; and the (replicates, days) matrix of the replicates' log changes.

    `days` holds the series' rows of intermediate.int_index_offer_days."""
    days = days[days["index_date"] <= closed_through]
    usable = days[days["fresh"] & ~days["held"]]
    if usable.empty:
        return pd.DataFrame(), np.zeros((rules.bootstrap_replicates, 0))
    calendar = pd.date_range(usable["index_date"].min(), days["index_date"].max(), freq="D").date
    pairs, point = match_closes(usable, calendar, rules)
    kept = pairs[pairs["within_bound"]]
    vendors = sorted(kept["vendor"].unique())
    by_vendor = (kept.groupby(["index_date", "vendor"])["log_relative"].mean()
                 .unstack("vendor").reindex(index=calendar, columns=vendors))
    means = by_vendor.to_numpy(dtype=float)           # (days, vendors), nan: not matched
    present = ~np.isnan(means)
    n_vendors = present.sum(axis=1)
    movers = np.abs(np.where(present, means, 0.0)) > 1e-9
    weights = vendor_weights(series_id, vendors, rules)
    filled = np.where(present, means, 0.0)
    numerator = weights @ filled.T                     # (replicates, days)
    denominator = weights @ present.T.astype(float)
    # a replicate that drew none of the day's vendors takes the day's point change
    replicate = np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1),
                         point[None, :])

    def per_day(frame: pd.DataFrame, column: str, how: str) -> np.ndarray:
        return frame.groupby("index_date")[column].agg(how).reindex(calendar).to_numpy()

    def count(frame: pd.DataFrame, column: str = "offer_id") -> np.ndarray:
        return np.nan_to_num(per_day(frame, column, "nunique")).astype(int)

    # vendors listed in the trailing coverage_days (the coverage share's denominator)
    listed = (days.assign(one=1).pivot_table(index="index_date", columns="vendor", values="one",
                                              aggfunc="max")
              .reindex(index=calendar).fillna(0).to_numpy())
    seen = np.cumsum(listed, axis=0)
    trailing = seen - np.vstack([np.zeros((rules.coverage_days, listed.shape[1])),
                                 seen[:-rules.coverage_days]])[:len(calendar)]
    coverage_vendors = (trailing > 0).sum(axis=1)
    out = pd.DataFrame({
        "index_date": calendar,
        "log_change": point,
        "offers_matched": count(kept),
        "vendors_matched": n_vendors.astype(int),
        "offers_beyond_bound": count(pairs[~pairs["within_bound"]]),
        "offers_listed": count(usable),
        "vendors_listed": count(usable, "vendor"),
        "offers_held": count(days[days["held"]]),
        "offers_stale": count(days[~days["fresh"] & ~days["held"]]),
        "listing_median": per_day(usable.assign(p=usable["close_price_per_gpu_hour"].astype(float)),
                                  "p", "median"),
        "vendors_in_series": coverage_vendors,
        "lone_mover": [vendors[int(np.argmax(m))] if m.sum() == 1 and n > 1 else None
                       for m, n in zip(movers, n_vendors, strict=True)],
    })
    return out, replicate


def lacking(row: pd.Series, rules: Rules, is_base: bool) -> str | None:
    """Why a day prints no level (None: it prints one)."""
    if is_base:
        if row["vendors_listed"] >= rules.min_vendors:
            return None
        return (f"base day: {row['vendors_listed']} vendor(s) listed, "
                f"{rules.min_vendors} needed")
    if row["vendors_matched"] >= rules.min_vendors:
        return None
    if row["offers_listed"] == 0:
        return "no offer listed that day"
    if row["offers_matched"] == 0:
        return (f"no offer seen on this day and in the {rules.match_window_days} day(s) "
                "before")
    return (f"{row['vendors_matched']} vendor(s) behind the day's change, "
            f"{rules.min_vendors} needed")


def evidence_word(reason: str | None, lone_mover: str | None = None) -> str:
    if reason is not None:
        return NOT_ENOUGH_EVIDENCE
    return ONE_VENDOR if lone_mover else ENOUGH


def lone_mover_note(row: pd.Series) -> str:
    """What a printed level's change rests on when one vendor alone moved."""
    return (f"the day's change is {row['lone_mover']}'s move alone: the other "
            f"{row['vendors_matched'] - 1} vendor(s) matched kept their prices")
