"""Each figure against its target: met or missed, and by how much (the `targets` rows of the
report)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipelines.tools.bench.config import (
    FLOOR_RATIO_TARGET,
    GIB,
    INCREMENTAL_GROWTH_TARGET,
    INCREMENTAL_TARGET_SECONDS,
    PEAK_MEMORY_TARGET_BYTES,
    WHOLE_RUN_TARGET_SECONDS,
)


def gap(value: float | None, target: float, unit: str = "s") -> dict[str, Any]:
    """How `value` stands against an at-most `target`: met or not, and by how much."""
    if value is None:
        return {"value": None, "target": target, "met": None, "gap": "not measured"}
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
    rows: list[dict[str, Any]] = []
    sizes = report.get("history") or []
    if sizes:
        year, week = sizes[-1], sizes[0]
        at = f"{year['days']} days x {year['offers']} offers"
        rows.append({"figure": f"incremental hourly update (median, load + models), {at}",
                     "unit": "s", **gap(year["incremental_median_seconds"],
                                        INCREMENTAL_TARGET_SECONDS)})
        rows.append({"figure": f"incremental hourly update (median, models only), {at}",
                     "unit": "s", **gap(year["incremental_models_median_seconds"],
                                        INCREMENTAL_TARGET_SECONDS)})
        if len(sizes) > 1:
            for what, key in (("load + models", "incremental_median_seconds"),
                              ("models only", "incremental_models_median_seconds")):
                ratio = year[key] / week[key] if week[key] else None
                rows.append({"figure": f"incremental update growth ({what}), {year['days']} d / "
                                       f"{week['days']} d", "unit": "x",
                             **gap(ratio, INCREMENTAL_GROWTH_TARGET, "x")})
        rows.append({"figure": f"full rebuild / bare-DuckDB floor, {at}", "unit": "x",
                     **gap(year["full_over_floor"], FLOOR_RATIO_TARGET, "x")})
        rows.append({"figure": f"peak memory of the pipeline's phases (largest: "
                               f"{year['peak_rss_phase']}), {at}", "unit": "bytes",
                     **gap(year["peak_rss_bytes"], PEAK_MEMORY_TARGET_BYTES, "bytes")})
    run = report.get("whole_run")
    if run:
        rows.append({"figure": "whole hourly run on the bundled snapshots (gpuprices run)",
                     "unit": "s", **gap(run["seconds"], WHOLE_RUN_TARGET_SECONDS)})
    return rows
