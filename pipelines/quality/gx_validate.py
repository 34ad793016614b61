"""GX itself: one ephemeral context per process (no files written), and validating a frame
against a suite there, answered as plain data. gx_checks.py asks either the GX worker process
(gx_worker.py) or this module; the worker calls this module too, so both give one verdict."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

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
