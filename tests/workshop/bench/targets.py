"""Each figure against its target: met or missed, and by how much (the `targets` rows of the
report)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.workshop.bench.config import (
    FLOOR_RATIO_TARGET,
    GIB,
    INCREMENTAL_GROWTH_TARGET,
    INCREMENTAL_TARGET_SECONDS,
    LARGE_OFFERS,
    LARGE_UPDATE_PUBLISH_TARGET_SECONDS,
    PEAK_MEMORY_TARGET_BYTES,
    PUBLISH_GROWTH_TARGET,
    PUBLISH_TARGET_SECONDS,
    STARTUP_HELP_TARGET_SECONDS,
    STARTUP_READ_TARGET_SECONDS,
    SUITE_TARGET_SECONDS,
    WHOLE_RUN_FLOOR_RATIO_TARGET,
    WHOLE_RUN_TARGET_SECONDS,
)


def gap(value: float | None, target: float, unit: str = "s",
        why_not: str = "not measured") -> dict[str, Any]:
    """How `value` stands against an at-most `target`: met or not, and by how much."""
    if value is None:
        return {"value": None, "target": target, "met": None, "gap": why_not}
    met = value <= target
    formats: dict[str, Callable[[float], str]] = {
        "bytes": lambda v: f"{v / GIB:.2f} GiB", "s": lambda v: f"{v:.2f} s",
        "x": lambda v: f"{v:.2f}"}
    fmt = formats.get(unit, lambda v: f"{v:.2f} {unit}")
    diff = abs(target - value)
    text = (f"met: {fmt(diff)} under ({value / target:.0%} of target)" if met
            else f"missed: {fmt(diff)} over ({value / target:.2f}x target)")
    return {"value": value, "target": target, "met": met, "gap": text}


def targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per figure of issues 14's and 45's tables that this report measured (the
    suite's is always there: the last recorded figure, or "not measured")."""
    rows: list[dict[str, Any]] = []
    sizes = report.get("history") or []
    if sizes:
        rows += _history_rows(sizes)
    startup = report.get("startup")
    if startup:
        for name, what, target in (
                ("help", "gpuprices --help", STARTUP_HELP_TARGET_SECONDS),
                ("prices", "gpuprices prices --limit 1 --max-age all",
                 STARTUP_READ_TARGET_SECONDS)):
            figure = startup[name]
            heavy = ", ".join(figure.get("heavy_imports") or []) or "no Dagster/Scrapy/Playwright"
            rows.append({"figure": f"CLI start-up: {what} (median of {startup['runs']}; imports "
                                   f"{heavy})",
                         "unit": "s", **gap(figure["median_seconds"], target, "s",
                                            f"not measured: exit codes {figure['exit_codes']}")})
    run = report.get("whole_run")
    if run:
        rows.append({"figure": "whole hourly run on the bundled snapshots (gpuprices run, after "
                               "a first run)",
                     "unit": "s", **gap(run["seconds"] if run["exit_code"] == 0 else None,
                                        WHOLE_RUN_TARGET_SECONDS, "s",
                                        f"not measured: exit code {run['exit_code']}")})
        first = run.get("first_run")
        if first:
            rows.append({"figure": "whole first run (empty data directory and Dagster home)",
                         "unit": "s", **gap(first["seconds"] if first["exit_code"] == 0 else None,
                                            WHOLE_RUN_TARGET_SECONDS, "s",
                                            f"not measured: exit code {first['exit_code']}")})
        rows.append(_floor_row(run))
    rows.append(_suite_row(report.get("suite")))
    return rows


def _history_rows(sizes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    year, week = sizes[-1], sizes[0]
    at = f"{year['days']} days x {year['offers']} offers"
    # The median of the updates after the first (history.steady_updates): an hour after an hour.
    rows.append({"figure": f"incremental hourly update (median, load + models), {at}",
                 "unit": "s", **gap(year["incremental_median_seconds"],
                                    INCREMENTAL_TARGET_SECONDS)})
    rows.append({"figure": f"incremental hourly update (median, models only), {at}",
                 "unit": "s", **gap(year["incremental_models_median_seconds"],
                                    INCREMENTAL_TARGET_SECONDS)})
    if len(sizes) > 1:
        for what, key in (("load + models", "incremental_median_seconds"),
                          ("models only", "incremental_models_median_seconds")):
            rows.append({"figure": f"incremental update growth ({what}), {year['days']} d / "
                                   f"{week['days']} d", "unit": "x",
                         **gap(_ratio(year[key], week[key]), INCREMENTAL_GROWTH_TARGET, "x")})
    rows.append({"figure": f"full rebuild / bare-DuckDB floor, {at}", "unit": "x",
                 **gap(year["full_over_floor"], FLOOR_RATIO_TARGET, "x",
                       "not measured (--skip-floor)" if year["floor"] is None
                       else "not measured")})
    rows.append({"figure": f"peak memory of the pipeline's phases (largest: "
                           f"{year['peak_rss_phase']}), {at}", "unit": "bytes",
                 **gap(year["peak_rss_bytes"], PEAK_MEMORY_TARGET_BYTES, "bytes")})
    publish = year["publish"]
    rows.append({"figure": f"publishing data/prices.db (checkpoint + {publish['method']}, "
                           f"{publish['bytes'] / GIB:.2f} GiB), {at}", "unit": "s",
                 **gap(publish["seconds"], PUBLISH_TARGET_SECONDS)})
    if year["offers"] >= LARGE_OFFERS:
        both = (year["incremental_median_seconds"] or 0) + publish["seconds"]
        rows.append({"figure": f"hourly update + publish (medians), {at}", "unit": "s",
                     **gap(both, LARGE_UPDATE_PUBLISH_TARGET_SECONDS)})
    if len(sizes) > 1:
        rows.append({"figure": f"publishing growth, {year['days']} d / {week['days']} d",
                     "unit": "x", **gap(_ratio(publish["seconds"], week["publish"]["seconds"]),
                                        PUBLISH_GROWTH_TARGET, "x")})
    if publish.get("feeds_seconds") is not None:   # the feeds an hour writes: what changed
        rows.append({"figure": f"writing the feeds (the days rebuilt), {at}", "unit": "s",
                     **gap(publish["feeds_seconds"], PUBLISH_TARGET_SECONDS)})
        if len(sizes) > 1 and week["publish"].get("feeds_seconds"):
            rows.append({"figure": f"feeds growth, {year['days']} d / {week['days']} d",
                         "unit": "x", **gap(_ratio(publish["feeds_seconds"],
                                                   week["publish"]["feeds_seconds"]),
                                            PUBLISH_GROWTH_TARGET, "x")})
    return rows


def _floor_row(run: dict[str, Any]) -> dict[str, Any]:
    """The whole run against its floor (whole_run.run_floor): what Dagster, start-up and
    imports add to the crawl and the models."""
    floor = run.get("floor") or {}
    figure = "whole run / floor (crawl alone + models alone, no Dagster)"
    if floor:
        figure += (f": {run['seconds']:.1f} s / ({floor['crawl_alone_seconds']:.1f} s + "
                   f"{floor['models_alone_seconds']:.1f} s)")
    return {"figure": figure, "unit": "x",
            **gap(_ratio(run["seconds"], floor.get("seconds")) if run["exit_code"] == 0 else None,
                  WHOLE_RUN_FLOOR_RATIO_TARGET, "x",
                  f"not measured: exit code {run['exit_code']}")}


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return numerator / denominator if numerator is not None and denominator else None


def _suite_row(suite: dict[str, Any] | None) -> dict[str, Any]:
    """`make test`'s pytest on a fresh clone: measured now (--suite) or the last recorded figure.
    A failed or timed-out suite has no time to compare: it stopped early (-x) or never ended."""
    figure = "make test on a fresh clone (pytest -x"
    if suite is None:
        return {"figure": figure + "; run the bench with --suite)", "unit": "s",
                **gap(None, SUITE_TARGET_SECONDS)}
    when = f"commit {str(suite.get('commit') or '?')[:7]}, {suite.get('finished_at', '?')}"
    cpu = suite.get("cpu_share_of_one_core")
    figure += f"; {when}" + (f"; {cpu:.0%} of one core" if cpu is not None else "") + ")"
    return {"figure": figure, "unit": "s",
            **gap(suite["seconds"] if suite.get("exit_code") == 0 else None,
                  SUITE_TARGET_SECONDS, "s",
                  f"not measured: the suite failed (exit code {suite.get('exit_code')})")}
