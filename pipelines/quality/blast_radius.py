"""Which crawls of a batch each blocking rule refuses, so that a failure holds those crawls alone
and every other source lands in the same run (docs/robustness.md, "Blast radius").

Every blocking rule on the batch is judged here one crawl at a time, with the suites the checks
use (suites.py): the row expectations (fields, sets, card bounds, future timestamps, slice
plausibility, one row per offer and hour) over the crawl's rows, and the source rules (volume,
price level) over the crawl's figures (pipelines/defs/sql/crawl_levels.sql). The one rule that
spans crawls, uniqueness, holds the later crawl of each repeated offer-hour: the fewest crawls
that explain it. Pure: frames in, reasons out.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

import pandas as pd

from pipelines.quality.gx_checks import Unexpected, judged, suite_fingerprint, unexpected_rows
from pipelines.quality.suites import SOURCE_ROW_ID, observation_suite, source_suite

ROW_CHECK = "observation_batch_meets_expectations"
SOURCE_CHECK = "observation_batch_sources_consistent"
# What names a refused row: its crawl first (a refused crawl figure: suites.SOURCE_ROW_ID).
CRAWL_ROW_ID = ["crawl_id", "source", "offer_id", "observed_hour"]
UNIQUE = "expect_compound_columns_to_be_unique"


@dataclass(frozen=True)
class HoldReason:
    """Why a rule refuses a crawl: the check, the column it judged, the figure and its bound."""
    check: str
    rule: str                    # the column judged: 'price_level_ratio', 'observed_at', ...
    figure: str                  # the crawl's worst value, with how many rows or which card
    bound: str                   # what the rule allows
    earlier_crawl: str | None = None   # a rule across crawls: the crawl kept instead

    @property
    def on_level(self) -> bool:
        """A source rule (volume, price level): a new level the later crawls may confirm. A row
        rule's refusal is a wrong row, which no later crawl makes right."""
        return self.check == SOURCE_CHECK

    def text(self) -> str:
        across = (f"; across crawls: the same offer-hour is in {self.earlier_crawl}, which is kept"
                  if self.earlier_crawl else "")
        return f"{self.check}: {self.rule} {self.figure}, bound {self.bound}{across}"


@dataclass(frozen=True)
class RowVerdict:
    """The row expectations' verdict on a batch: each refused crawl's reasons, whether the suite
    passed as a whole (None: no rows), and the fingerprint of what was judged (the rows and the
    suite: gx_checks.suite_fingerprint), which lets the blocking check know the same rows."""
    reasons: dict[str, list[HoldReason]]
    passed: bool | None
    fingerprint: str


def row_reasons(rows: pd.DataFrame, now: datetime) -> dict[str, list[HoldReason]]:
    """{crawl_id: reasons} for every crawl whose rows fail a row expectation."""
    return row_verdict(rows, now).reasons


def row_verdict(rows: pd.DataFrame, now: datetime) -> RowVerdict:
    """row_reasons, with the suite's verdict on the whole batch and its fingerprint."""
    suite = observation_suite(now)
    verdict = judged(rows, "crawl_rows", suite, CRAWL_ROW_ID)
    reasons: dict[str, list[HoldReason]] = defaultdict(list)
    for failure in verdict.failed:
        if failure.expectation == UNIQUE:
            for crawl_id, reason in _repeated(failure):
                reasons[crawl_id].append(reason)
            continue
        by_crawl: dict[str, list[dict]] = defaultdict(list)
        for row in failure.rows:
            by_crawl[row["crawl_id"]].append(row)
        for crawl_id, refused in by_crawl.items():
            value = refused[0].get(failure.column)
            reasons[crawl_id].append(HoldReason(
                ROW_CHECK, str(failure.column),
                f"{_shown(value)} in {len(refused)} row(s), e.g. offer {refused[0]['offer_id']}",
                bound_text(failure)))
    return RowVerdict(dict(reasons), verdict.passed, suite_fingerprint(rows, suite))


def _repeated(failure: Unexpected) -> list[tuple[str, HoldReason]]:
    """An offer-hour seen more than once: within one crawl, that crawl; across crawls, every
    crawl but the earliest (normalization keeps the earliest, so these should not happen)."""
    crawls: dict[tuple, set[str]] = defaultdict(set)
    for row in failure.rows:
        crawls[(row["offer_id"], str(row["observed_hour"]))].add(row["crawl_id"])
    held: dict[str, HoldReason] = {}
    for (offer_id, hour), seen_in in sorted(crawls.items()):
        first, *later = sorted(seen_in)
        figure = f"offer {offer_id} at {hour} more than once"
        for crawl_id in later or [first]:
            held.setdefault(crawl_id, HoldReason(ROW_CHECK, "offer_id+observed_hour", figure,
                                                 "once per offer and hour",
                                                 first if later else None))
    return sorted(held.items())


def level_reasons(levels: pd.DataFrame) -> dict[str, list[HoldReason]]:
    """{crawl_id: reasons} for every crawl whose volume or price level (per card) fails the
    source rules against its source's history (crawl_levels.sql's frame)."""
    reasons: dict[str, list[HoldReason]] = defaultdict(list)
    for failure in unexpected_rows(levels, "crawl_levels", source_suite(), SOURCE_ROW_ID):
        worst: dict[str, dict] = {}
        for row in failure.rows:
            kept = worst.get(row["crawl_id"])
            if kept is None or _distance(row[failure.column]) > _distance(kept[failure.column]):
                worst[row["crawl_id"]] = row
        for crawl_id, row in worst.items():
            card = f" ({row['gpu_model']})" if row.get("gpu_model") and \
                failure.column == "price_level_ratio" else ""
            reasons[crawl_id].append(HoldReason(
                SOURCE_CHECK, str(failure.column), f"{float(row[failure.column]):.3g}{card}",
                bound_text(failure)))
    return dict(reasons)


def confirming(levels: pd.DataFrame, held: str, later: list[str]) -> set[str]:
    """The crawls of `later` whose volume and price level pass the source rules against the
    crawl `held` (as if it were their history): they are at its level."""
    mine = levels[levels["crawl_id"] == held]
    if mine.empty or not later:
        return set()
    rows_then = float(mine["crawl_rows"].iloc[0])
    before = mine.dropna(subset=["gpu_model"]).set_index("gpu_model")["median_now"]
    pairs = levels[levels["crawl_id"].isin(later)].copy()
    # a held crawl with no rows is confirmed only by crawls with none either
    pairs["volume_ratio"] = (pairs["crawl_rows"] / rows_then if rows_then
                             else pairs["crawl_rows"].map(lambda n: 1.0 if n == 0 else 0.0))
    pairs["price_level_ratio"] = pairs["median_now"] / pairs["gpu_model"].map(before)
    refused = {row["crawl_id"] for failure in unexpected_rows(
        pairs, "crawl_confirms", source_suite(), SOURCE_ROW_ID) for row in failure.rows}
    return set(later) - refused


def bound_text(failure: Unexpected) -> str:
    """What the failed expectation allows, in a few words."""
    low, high = failure.bounds.get("min_value"), failure.bounds.get("max_value")
    if low is not None and high is not None:
        return f"{_shown(low)}..{_shown(high)}"
    if low is not None:
        return f">{'' if failure.bounds.get('strict_min') else '='} {_shown(low)}"
    if high is not None:
        return f"<= {_shown(high)}"
    if "value_set" in failure.bounds:
        values = failure.bounds["value_set"]
        return f"in {values}" if len(values) <= 4 else f"one of {len(values)} known values"
    return "not null" if "null" in failure.expectation else failure.expectation


def _shown(value) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _distance(ratio) -> float:
    """How far a ratio is from 1, either way (a level 3x up and one 3x down are as far)."""
    ratio = float(ratio)
    return max(ratio, 1 / ratio) if ratio > 0 else float("inf")
