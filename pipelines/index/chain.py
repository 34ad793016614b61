"""Chaining a series' days into published rows (pure; docs/price-index.md, "Publication").

A published row is never rewritten. The rows to publish are the series' days that have none yet:
after the last published day, each day's level is the previous day's chain level (published or
just computed) times the day's change, so data that arrive late for a published day enter the
next day's change, as in any chained index; before the first published day (history loaded from
an archive later), the chain runs backwards from the first published row, `chained` =
'backward', and the base stays where it was. A series seen for the first time is anchored on its
first usable day: the level starts at that day's listing median.

`chain_level` carries the chain through days without enough evidence (whose `index_level` is
null: such a day says so instead of printing a number); it is the chain's running value, kept so
that the next day's level can be reproduced from the published rows alone.
"""

from __future__ import annotations

import hashlib
import json
import math
from datetime import date, datetime

import numpy as np
import pandas as pd

from pipelines.index.method import Rules, evidence_word, lacking, lone_mover_note

# The published columns, in order (pipelines/index/sql/create_price_index.sql creates them).
INDEX_COLUMNS = (
    "series_id", "index_card", "market", "currency", "offer_kind", "term",
    "index_date", "index_level", "level_low", "level_high", "change_pct", "change_low_pct",
    "change_high_pct", "listing_median", "chain_level", "base_date", "base_level",
    "offers_matched", "vendors_matched", "offers_listed", "vendors_listed", "vendors_in_series",
    "vendor_coverage", "offers_beyond_bound", "offers_held", "offers_stale", "evidence",
    "evidence_lacking", "chained", "method_version", "content_hash", "published_at",
)
SERIES_COLUMNS = ("series_id", "index_card", "market", "currency", "offer_kind",
                  "term")
LEVEL_DIGITS = 6        # levels in the market's currency per GPU-hour
PCT_DIGITS = 4


def _round(value, digits: int):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return round(float(value), digits)


def content_hash(row: dict) -> str:
    """sha256 of the row's values (every published column but the hash and published_at), as
    canonical JSON: anyone can recompute it from the feed."""
    payload = {k: (v.isoformat() if isinstance(v, date | datetime) else v)
               for k, v in row.items() if k not in ("content_hash", "published_at")}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False,
                                     separators=(",", ":")).encode()).hexdigest()


def _offsets(replicate: np.ndarray, point: np.ndarray, base_i: int) -> np.ndarray:
    """(replicates, days): each replicate's log level minus the point log level, both counted
    from the base day."""
    rep = np.cumsum(replicate, axis=1)
    pt = np.cumsum(point)
    return (rep - rep[:, [base_i]]) - (pt - pt[base_i])[None, :]


def chain_rows(series: dict, days: pd.DataFrame, replicate: np.ndarray,
               published: pd.DataFrame, rules: Rules, published_at: datetime) -> list[dict]:
    """The rows of `series` (its SERIES_COLUMNS values) to publish now; `days` and `replicate`
    from method.series_days; `published` the series' rows already published (this method)."""
    if days.empty:
        return []
    dates = list(days["index_date"])
    position = {d: i for i, d in enumerate(dates)}
    point = days["log_change"].to_numpy(dtype=float)
    chain: dict[int, float] = {}
    done = set()
    if len(published):
        for row in published.itertuples():
            if row.index_date in position:
                chain[position[row.index_date]] = float(row.chain_level)
            done.add(row.index_date)
        base_date = published["base_date"].iloc[0]
        base_level = float(published["base_level"].iloc[0])
    else:
        base_date = dates[0]
        base_level = float(days["listing_median"].iloc[0])
        chain[0] = base_level
    base_i = position.get(base_date, 0)
    how: dict[int, str] = {}
    if base_date in position and base_date not in done:
        how[base_i] = "base"
    known = sorted(chain)
    first = known[0] if known else base_i
    for i in range(first + 1, len(dates)):           # forward from the first known day
        if i not in chain:
            chain[i] = chain[i - 1] * math.exp(point[i])
            how[i] = "forward"
    for i in range(first - 1, -1, -1):               # backward before it
        chain[i] = chain[i + 1] / math.exp(point[i + 1])
        how[i] = "backward"
    # every day's interval in one call per matrix (a call per day was most of the chaining)
    level_bounds = np.quantile(_offsets(replicate, point, base_i), rules.quantiles, axis=0)
    change_bounds = np.quantile(replicate, rules.quantiles, axis=0)
    rows = []
    for i, day in enumerate(dates):
        if day in done or i not in how:
            continue
        facts = days.iloc[i]
        reason = lacking(facts, rules, is_base=how[i] == "base")
        with_change = reason is None and how[i] != "base"
        if how[i] == "backward":
            # a day chained backwards takes its level from the next day's change: that link's
            # evidence decides whether it prints one
            link = facts.copy()
            link[["offers_matched", "vendors_matched"]] = \
                days.iloc[i + 1][["offers_matched", "vendors_matched"]]
            reason = lacking(link, rules, is_base=False)
        enough = reason is None
        mover = facts.get("lone_mover") if with_change and enough else None
        level = chain[i]
        lo, hi = level_bounds[:, i]
        change_lo, change_hi = change_bounds[:, i]
        row = {
            **series,
            "index_date": day,
            "index_level": _round(level, LEVEL_DIGITS) if enough else None,
            "level_low": _round(level * math.exp(lo), LEVEL_DIGITS) if enough else None,
            "level_high": _round(level * math.exp(hi), LEVEL_DIGITS) if enough else None,
            "change_pct": _round(math.expm1(point[i]) * 100, PCT_DIGITS) if with_change else None,
            "change_low_pct": _round(math.expm1(change_lo) * 100, PCT_DIGITS)
            if with_change else None,
            "change_high_pct": _round(math.expm1(change_hi) * 100, PCT_DIGITS)
            if with_change else None,
            "listing_median": _round(facts["listing_median"], LEVEL_DIGITS),
            "chain_level": _round(level, LEVEL_DIGITS),
            "base_date": base_date,
            "base_level": _round(base_level, LEVEL_DIGITS),
            "offers_matched": int(facts["offers_matched"]),
            "vendors_matched": int(facts["vendors_matched"]),
            "offers_listed": int(facts["offers_listed"]),
            "vendors_listed": int(facts["vendors_listed"]),
            "vendors_in_series": int(facts["vendors_in_series"]),
            "vendor_coverage": _round(facts["vendors_matched"] / facts["vendors_in_series"], 4)
            if facts["vendors_in_series"] else None,
            "offers_beyond_bound": int(facts["offers_beyond_bound"]),
            "offers_held": int(facts["offers_held"]),
            "offers_stale": int(facts["offers_stale"]),
            "evidence": evidence_word(reason, mover),
            "evidence_lacking": lone_mover_note(facts) if mover else reason,
            "chained": how[i],
            "method_version": rules.method_version,
        }
        row["content_hash"] = content_hash(row)
        row["published_at"] = published_at
        rows.append(row)
    return rows
