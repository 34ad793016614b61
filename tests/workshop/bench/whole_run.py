"""(e) `gpuprices run` on the bundled snapshots, end to end, in a subprocess with its own data
directory and Dagster home; where its time went, read back from the run's own instance; and its
floor: the same crawl with no Dagster around it, plus the same models built on the same data.

Runs one after the other in the same data directory and Dagster home: the first on empty ones
(the instance's storage made, every model built in full), then the hourly run, the one a
schedule repeats (the storage there, the models updated incrementally), REPEATS times. The
target is the hourly runs' median; the first run is reported beside it. The public price record
(data/records/) is left out of all of them (GPUPRICES_RECORD=off), because only a data
directory's first run loads it (minutes of normalizing 64,000 archived offers); every later run
finds it loaded and adds nothing."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from pipelines.backfill.record_switch import RECORD_ENV
from spiders.layout import REPO_ROOT, crawl_verdicts_dir, db_path, work_db_path
from tests.workshop.bench.config import say
from tests.workshop.bench.phases import run_phase

# Hourly runs measured after the first, and crawls alone for the floor: the median of each is
# the figure (on a shared 2-core machine one run of the same code took 9 to 14 s).
REPEATS = 3


def whole_run_bench(root: Path) -> dict[str, Any]:
    """`gpuprices run` in subprocesses with a temporary data directory and Dagster home: the
    first run, then REPEATS hourly runs (their median is the top-level figure; the other
    figures are the last one's)."""
    data, home = root / "data", root / "dagster_home"
    say("whole run: gpuprices run (bundled snapshots), the first run on an empty data directory")
    first, first_code, _ = _gpuprices_run(data, home)
    hourly: list[tuple[float, int]] = []
    for n in range(REPEATS):
        say(f"whole run: gpuprices run again, hourly run {n + 1} of {REPEATS}")
        before = {p for p in crawl_verdicts_dir(data).glob("*/*.json")}
        seconds, exit_code, output = _gpuprices_run(data, home)
        hourly.append((seconds, exit_code))
    verdicts = [json.loads(p.read_text(encoding="utf-8"))
                for p in sorted(crawl_verdicts_dir(data).glob("*/*.json")) if p not in before]
    # the first failure's code (a killed run's is negative: max() would hide it behind a 0)
    exit_code = next((code for _, code in hourly if code), 0)
    return {"seconds": statistics.median(s for s, _ in hourly), "exit_code": exit_code,
            "hourly_runs_seconds": [s for s, _ in hourly],
            "first_run": {"seconds": first, "exit_code": first_code},
            "sources_passed": sum(1 for v in verdicts if v.get("passed")),
            "sources": len(verdicts), "published": db_path(data).exists(),
            "db_path": str(db_path(data)),
            "requests": sum(v.get("requests") or 0 for v in verdicts),
            "crawl_seconds_by_source": {v["source"]: _seconds_between(v) for v in verdicts},
            "crawl_span_seconds": _span(verdicts),
            **_dagster_run_times(home),
            "record": f"left out ({RECORD_ENV}=off): only a first run loads it",
            "output_tail": output.splitlines()[-12:],
            **(run_floor(root, data) if exit_code == 0 else {})}


def _gpuprices_run(data: Path, home: Path) -> tuple[float, int, str]:
    """One `gpuprices run` over the bundled snapshots: its wall time, exit code and output."""
    env = {**os.environ, "GPUPRICES_DATA_DIR": str(data), "DAGSTER_HOME": str(home),
           RECORD_ENV: "off"}
    env.pop("GPUPRICES_REPLAY_URL", None)
    env.pop("GPUPRICES_MODE", None)
    gpuprices = Path(sys.executable).with_name("gpuprices")
    cmd = [str(gpuprices), "run"] if gpuprices.exists() else [
        sys.executable, "-c", "from pipelines.cli import main; main()", "run"]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    output, _ = proc.communicate()
    return time.perf_counter() - started, proc.returncode, output


def run_floor(root: Path, data: Path) -> dict[str, Any]:
    """The run's floor, each part in a fresh process: the crawl alone (crawl_many, as the
    raw_offers step calls it, into a data directory of its own) and the models alone (every
    model built in full, as a first run builds them, on a copy of the run's working database)."""
    say(f"whole run floor: the crawl alone ({REPEATS} times), then the models alone")
    crawls = [run_phase("crawl_alone", data=str(root / f"floor_data_{n}")) for n in range(REPEATS)]
    crawl = sorted(crawls, key=lambda c: c["seconds"])[REPEATS // 2]     # the median crawl
    models_db = root / "models_alone.db"
    shutil.copyfile(work_db_path(data), models_db)
    models = run_phase("full", db=str(models_db))
    models_db.unlink()
    floor = crawl["seconds"] + models["seconds"]
    return {"floor": {"crawl_alone_seconds": crawl["seconds"],
                      "crawl_alone_sources_passed": crawl["sources_passed"],
                      "models_alone_seconds": models["seconds"],
                      "models_alone": len(models["models"]), "seconds": floor}}


def _seconds_between(verdict: dict[str, Any]) -> float | None:
    try:   # the monitor's timestamps have a 1 s resolution
        return (datetime.fromisoformat(verdict["finished_at"])
                - datetime.fromisoformat(verdict["started_at"])).total_seconds()
    except (KeyError, TypeError, ValueError):
        return None


def _span(verdicts: list[dict[str, Any]]) -> float | None:
    """The crawl's wall time, its first source's start to its last one's finish: `gpuprices run`
    starts it before the Dagster run (pipelines/crawl_ahead.py), so the crawl step's own time is
    only what is left of it by then."""
    try:
        times = [(datetime.fromisoformat(v["started_at"]), datetime.fromisoformat(v["finished_at"]))
                 for v in verdicts if v.get("started_at") and v.get("finished_at")]
    except (TypeError, ValueError):
        return None
    if not times:
        return None
    return (max(f for _, f in times) - min(s for s, _ in times)).total_seconds()


def _dagster_run_times(home: Path) -> dict[str, Any]:
    """Where the run's time went: the Dagster run's duration and each step's, read back from
    the run's own instance (the rest of the wall time is process start-up and imports)."""
    import dagster as dg

    # the instance's dagster.yaml reads its own directory from DAGSTER_HOME (the event log's)
    before = os.environ.get("DAGSTER_HOME")
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        with dg.DagsterInstance.from_config(str(home)) as instance:
            runs = instance.get_runs(limit=1)
            if not runs:
                return {}
            run_stats = instance.get_run_stats(runs[0].run_id)
            steps = {s.step_key: s.end_time - s.start_time
                     for s in instance.get_run_step_stats(runs[0].run_id)
                     if s.start_time and s.end_time}
    except Exception as exc:   # a figure we could not read is reported missing, not fatal
        return {"dagster_error": f"{type(exc).__name__}: {exc}"}
    finally:
        if before is None:
            os.environ.pop("DAGSTER_HOME", None)
        else:
            os.environ["DAGSTER_HOME"] = before
    return {"dagster_run_seconds": (run_stats.end_time - run_stats.start_time
                                    if run_stats.start_time and run_stats.end_time else None),
            "step_seconds": dict(sorted(steps.items(), key=lambda kv: -kv[1]))}
