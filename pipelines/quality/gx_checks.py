"""Great Expectations (1.x) suites run against pandas DataFrames.

GX's SQL datasource cannot read DuckDB (see docs/architecture.md), so a check loads the table
into pandas and validates that. One ephemeral context per process; no files written.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipelines.quality.suites import Expect

os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

_context_lock = threading.Lock()
_made: list = []   # the process's one context, once made


def _context():
    with _context_lock:   # the warm-up thread and a check may both ask first
        if not _made:
            import great_expectations as gx
            from great_expectations.data_context.types.base import ProgressBarsConfig

            context = gx.get_context(mode="ephemeral")
            context.variables.progress_bars = ProgressBarsConfig(globally=False)  # no tqdm
            _made.append(context)
        return _made[0]


def warm_up() -> None:
    """Import GX and make the context (about 3 s of CPU): the GX worker process does it as it
    starts (gx_worker.py); without one, pipelines/warm_up.py does it while a run's crawl waits on
    its Scrapy processes, so it is ready by the time the checks run."""
    try:
        import great_expectations.expectations  # noqa: F401

        _context()
    except Exception:   # the check imports GX again and reports its own error
        pass


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


@dataclass(frozen=True)
class Outcome:
    """One expectation's result as plain data (GX's own objects stay in the process that made
    them): whether it was met, its type (GX's name, e.g. expect_column_values_to_not_be_null),
    its arguments and GX's result dictionary."""
    success: bool
    kind: str
    kwargs: dict
    result: dict


@dataclass(frozen=True)
class Validation:
    success: bool
    outcomes: list[Outcome]


def validation(df: pd.DataFrame, suite_name: str, expectations: list[Expect],
               result_format: dict) -> Validation:
    """GX's verdict of `expectations` over `df`: in the GX worker process when this process
    started one (gx_worker.py: `gpuprices run` does), else here. The same function validates in
    both, so the verdict is the same."""
    from pipelines.quality import gx_worker

    answer = gx_worker.validate(df, suite_name, expectations, result_format)
    if answer is not None:
        return answer
    return validate_here(df, suite_name, expectations, result_format)


def validate_here(df: pd.DataFrame, suite_name: str, expectations: list[Expect],
                  result_format: dict) -> Validation:
    """GX's verdict of `expectations` over `df`, validated in this process."""
    import great_expectations as gx
    import great_expectations.expectations as gxe

    context = _context()
    source = context.data_sources.add_or_update_pandas(f"{suite_name}_source")
    asset = source.add_dataframe_asset(f"{suite_name}_{len(source.assets)}")
    batch = asset.add_batch_definition_whole_dataframe("whole").get_batch(
        batch_parameters={"dataframe": df})
    suite = gx.ExpectationSuite(name=suite_name, expectations=[
        getattr(gxe, e.kind)(**e.kwargs) for e in expectations])
    result = batch.validate(suite, result_format=result_format)
    return Validation(bool(result.success), [
        Outcome(bool(r.success), r.expectation_config.type, dict(r.expectation_config.kwargs),
                dict(r.result)) for r in result.results])
