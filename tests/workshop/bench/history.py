"""(b)-(d) One history size: write it, rebuild it (against the floor), update it hour by hour,
publish it; and the offers the histories are built from."""

from __future__ import annotations

import math
import statistics
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tests.workshop.bench.config import PIPELINE_PHASES, SEED, file_bytes, say
from tests.workshop.bench.phases import run_phase


def best_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest of repeated runs (its per-model times too), with every run's time and the
    highest peak memory of them all."""
    best = dict(min(runs, key=lambda r: r["seconds"]))
    best["all_seconds"] = [r["seconds"] for r in runs]
    best["peak_rss_bytes"] = max(r["peak_rss_bytes"] for r in runs)
    best["models_sha256_all"] = sorted({r["models_sha256"] for r in runs})
    return best


def history_bench(work: Path, offers_file: Path, days: int, hours: int,
                  repeats: int = 2, floor: bool = True) -> dict[str, Any]:
    """(b) and (c) at one size: write; the floor (unless `floor` is false) and the full
    rebuild, alternating, `repeats` times each (the fastest of each is compared: on a busy
    machine the order and the neighbours would otherwise decide the ratio); then `hours` hourly
    updates; then `repeats` publications (median)."""
    db = work / f"history-{days}d.db"
    say(f"history {days} days: writing")
    generate = run_phase("generate", db=str(db), offers_file=str(offers_file), days=days)
    say(f"history {days} days: {generate['rows']:,} rows in {generate['seconds']:.1f} s")
    floors, fulls = [], []
    for _ in range(max(1, repeats)):
        if floor:
            floors.append(run_phase("floor", db=str(db)))
            say(f"history {days} days: bare-DuckDB floor {floors[-1]['seconds']:.1f} s")
        fulls.append(run_phase("full", db=str(db)))
        say(f"history {days} days: full rebuild {fulls[-1]['seconds']:.1f} s")
    full = best_run(fulls)
    say(f"history {days} days: {hours} hourly updates")
    end = datetime.fromisoformat(generate["end"])
    updates = []
    for i in range(hours):
        hour = (end + timedelta(hours=i)).isoformat()
        updates.append(run_phase("incremental", db=str(db), offers_file=str(offers_file),
                                 hour=hour))
        say(f"history {days} days: update {hour}: {updates[-1]['seconds']:.2f} s")
    publishes = [run_phase("publish", db=str(db)) for _ in range(max(1, repeats))]
    publish = {**publishes[0],   # the median time of `repeats` publications, in fresh processes
               "seconds": statistics.median(p["seconds"] for p in publishes),
               "copy_seconds": statistics.median(p["copy_seconds"] for p in publishes),
               "all_seconds": [p["seconds"] for p in publishes],
               "feeds_seconds": statistics.median(p["feeds_seconds"] for p in publishes),
               "peak_rss_bytes": max(p["peak_rss_bytes"] for p in publishes)}
    say(f"history {days} days: publish {publish['seconds']:.2f} s ({publish['method']}), "
        f"feeds {publish['feeds_seconds']:.2f} s")
    size = {"days": days, "offers": generate["offers"], "rows": generate["rows"],
            "generate": generate, "floor": best_run(floors) if floors else None, "full": full,
            "incremental": updates,
            "publish": publish,
            "file_bytes_observations": generate["file_bytes"],
            "file_bytes": file_bytes(db)}
    size.update(summarize_size(size))
    db.unlink(missing_ok=True)
    Path(f"{db}.wal").unlink(missing_ok=True)
    return size


def steady_updates(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The hourly updates that follow an hourly update. The first one after the full rebuild
    is reported on its own (`incremental_first_seconds`): it also pays for what the rebuild left
    (a freshly checkpointed file, the first merge into the merge-grain tables), which an hourly
    run after an hourly run does not; one update alone is all there is."""
    return updates[1:] or updates


def summarize_size(size: dict[str, Any]) -> dict[str, Any]:
    updates = size["incremental"]
    steady = steady_updates(updates)
    floor = size["floor"]
    phases = {"generate": size["generate"]["peak_rss_bytes"],
              **({"floor": floor["peak_rss_bytes"]} if floor else {}),
              "full": size["full"]["peak_rss_bytes"],
              "incremental": max((u["peak_rss_bytes"] for u in updates), default=0),
              "publish": size["publish"]["peak_rss_bytes"]}
    # The target is the pipeline's: writing the history is the simulator's work and the floor is
    # a reference, so their peaks are reported but not held against it.
    pipeline = {k: v for k, v in phases.items() if k in PIPELINE_PHASES}
    return {
        "incremental_first_seconds": updates[0]["seconds"] if updates else None,
        "incremental_median_seconds": statistics.median(u["seconds"] for u in steady)
        if steady else None,
        "incremental_models_median_seconds": statistics.median(u["models_seconds"]
                                                               for u in steady)
        if steady else None,
        "incremental_load_median_seconds": statistics.median(u["load_seconds"] for u in steady)
        if steady else None,
        "full_over_floor": size["full"]["seconds"] / floor["seconds"]
        if floor and floor["seconds"] else None,
        "peak_rss_bytes_by_phase": phases,
        "peak_rss_bytes": max(pipeline.values()),
        "peak_rss_phase": max(pipeline, key=pipeline.get),
    }


def bench_offers(count: int, base) -> Any:
    """`count` offers spread evenly over the real ones and their clones (scale_offers), so every
    source keeps its share whatever the count."""
    import numpy as np

    from pipelines.simulate import scale_offers

    scale = max(1, math.ceil(count / len(base)))
    scaled = scale_offers(base, scale, seed=SEED)
    picks = np.unique(np.linspace(0, len(scaled) - 1, count).round().astype(int))
    return scaled.iloc[picks].reset_index(drop=True)
