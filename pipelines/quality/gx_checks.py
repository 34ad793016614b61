"""Great Expectations (1.x) suites run against pandas DataFrames.

GX's SQL datasource cannot read DuckDB (see docs/architecture.md), so a check loads the table
into pandas and validates that: in the GX worker process when the run started one
(gx_worker.py), else in this process (gx_validate.py, GX itself).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipelines.quality import gx_worker
from pipelines.quality.gx_validate import Validation, validate_here
from pipelines.quality.suites import Expect


@dataclass(frozen=True)
class SuiteResult:
    success: bool
    evaluated: int
    failures: list[dict]   # one per failed expectation: type, column(s), count, offending rows


def validate(df: pd.DataFrame, suite_name: str, expectations: list[Expect],
             row_id_columns: list[str] | None = None) -> SuiteResult:
    """Run `expectations` (suites.Expect) over `df`; never raises on a failed expectation.

    `row_id_columns` name the offending rows in each failure (up to GX's partial list of 20)."""
    result_format: dict = {"result_format": "SUMMARY"}
    if row_id_columns:
        result_format["unexpected_index_column_names"] = row_id_columns
    result = validation(df, suite_name, expectations, result_format)
    failures = []
    for r in result.outcomes:
        if r.success:
            continue
        failures.append({
            "expectation": r.kind,
            "column": r.kwargs.get("column") or r.kwargs.get("column_list"),
            "unexpected_count": r.result.get("unexpected_count"),
            "sample": [str(v) for v in (r.result.get("partial_unexpected_list") or [])[:5]],
            "rows": [{k: str(v) for k, v in row.items()}
                     for row in (r.result.get("partial_unexpected_index_list") or [])[:10]],
            "observed_value": (str(r.result.get("observed_value"))
                               if "observed_value" in r.result else None),
        })
    return SuiteResult(result.success, len(result.outcomes), failures)


@dataclass(frozen=True)
class Unexpected:
    """One failed expectation with every row it refused (not GX's partial list of 20)."""
    expectation: str
    column: str | list[str]
    bounds: dict             # the expectation's own arguments: min_value, max_value, value_set
    rows: list[dict]         # each refused row: its id columns and the value judged


@dataclass(frozen=True)
class Judged:
    """GX's verdict on a whole frame (`passed`: every expectation met; None: an empty frame, not
    validated) and every failed expectation with all the rows it refused."""
    passed: bool | None
    failed: list[Unexpected]


def unexpected_rows(df: pd.DataFrame, suite_name: str, expectations: list[Expect],
                    row_id_columns: list[str]) -> list[Unexpected]:
    """Every failed expectation of `expectations` over `df`, each with all the rows it refused,
    named by `row_id_columns`: what pins a failure to the crawls it comes from."""
    return judged(df, suite_name, expectations, row_id_columns).failed


def judged(df: pd.DataFrame, suite_name: str, expectations: list[Expect],
           row_id_columns: list[str]) -> Judged:
    """unexpected_rows, with whether the suite passed as a whole (a failed expectation that names
    no row, as a column missing, fails it too)."""
    if df.empty:
        return Judged(None, [])
    result = validation(df, suite_name, expectations,
                        {"result_format": "COMPLETE",
                         "unexpected_index_column_names": row_id_columns})
    failed = []
    for r in result.outcomes:
        if r.success:
            continue
        kwargs = dict(r.kwargs)
        column = kwargs.pop("column", None) or kwargs.pop("column_list", None)
        kwargs.pop("batch_id", None)
        failed.append(Unexpected(r.kind, column, kwargs,
                                 list(r.result.get("unexpected_index_list") or [])))
    return Judged(result.success, failed)


def suite_fingerprint(df: pd.DataFrame, expectations: list[Expect]) -> str:
    """What GX's verdict of `expectations` over `df` depends on, as one hash: every expectation
    with its arguments, the frame's columns and types, and its rows as a multiset (in any order:
    no expectation here depends on the order, and two reads of one table need not agree on it).
    The same fingerprint, the same verdict: a frame validated once need not be validated again."""
    digest = hashlib.sha256()
    for expectation in expectations:
        digest.update(repr(expectation).encode())
    digest.update(repr([(str(c), str(t)) for c, t in df.dtypes.items()]).encode())
    digest.update(np.sort(pd.util.hash_pandas_object(df, index=False).to_numpy()).tobytes())
    return digest.hexdigest()


def validation(df: pd.DataFrame, suite_name: str, expectations: list[Expect],
               result_format: dict) -> Validation:
    """GX's verdict of `expectations` over `df`: in the GX worker process when this process
    started one (gx_worker.py: `gpuprices run` does), else here. The same function validates in
    both, so the verdict is the same."""
    answer = gx_worker.validate(df, suite_name, expectations, result_format)
    if answer is not None:
        return answer
    return validate_here(df, suite_name, expectations, result_format)
