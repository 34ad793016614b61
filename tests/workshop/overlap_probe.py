"""Figures, not a test: N pairs of `gpuprices run` started at the same moment on one data
directory, each run over the bundled snapshots of a few sources captured at its own hour; then
what landed. `python -m tests.workshop.overlap_probe [--pairs 10] [--source S ...]`.

Printed: per pair, each run's exit code, whether it waited for the other (and how long), its wall
time; then per hour, the observations expected (the reference run's count, the same snapshots an
hour apart) against those that landed; the crawls marked normalized without rows, and those left
pending. Issue 16 (part 1) measured 3 of 9 such pairs losing a run's rows before the lock.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from pipelines.warehouse.sql_files import sql_text
from spiders.layout import REPO_ROOT, SNAPSHOT_DIR, work_db_path

SOURCES = ("idc_sinnet_bj", "azure")
# Hours in the past (the batch checks refuse observations from the future), one per run.
FIRST_HOUR = datetime(2026, 11, 29, 0, tzinfo=UTC)
WAITED = re.compile(r"the other run finished; waited (\d+) s")


def snapshots_at(root: Path, sources: tuple[str, ...], captured_at: datetime) -> Path:
    """Copies of `sources`' bundled snapshots under `root`, captured at `captured_at`: a replay
    of them observes that hour (the replay server sends the manifest's capture time)."""
    for source in sources:
        shutil.copytree(SNAPSHOT_DIR / source, root / source)
        manifest = root / source / "manifest.json"
        meta = json.loads(manifest.read_text(encoding="utf-8"))
        meta["captured_at"] = captured_at.strftime("%Y-%m-%dT%H:%M:%SZ")
        manifest.write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    return root


def start_run(root: Path, sources: tuple[str, ...], hour: datetime, lock_wait: float,
              repo: Path) -> tuple[subprocess.Popen, float]:
    snapshots = snapshots_at(root / "snapshots" / hour.strftime("%Y%m%dT%H"), sources, hour)
    env = {**os.environ, "GPUPRICES_DATA_DIR": str(root / "data"),
           "DAGSTER_HOME": str(root / "dagster_home"), "GPUPRICES_SNAPSHOT_DIR": str(snapshots),
           "GPUPRICES_LOCK_WAIT": f"{lock_wait:g}"}
    for name in ("GPUPRICES_REPLAY_URL", "GPUPRICES_MODE"):
        env.pop(name, None)
    args = [arg for source in sources for arg in ("--source", source)]
    proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "run", *args], cwd=repo,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc, time.monotonic()


def finish(proc: subprocess.Popen, started: float) -> dict:
    output, _ = proc.communicate(timeout=1800)
    waited = WAITED.search(output)
    return {"exit": proc.returncode, "seconds": time.monotonic() - started,
            "waited": int(waited.group(1)) if waited else None,
            "locked_out": "another run is using" in output and proc.returncode == 5,
            "tail": output.splitlines()[-3:]}


def landed(data_dir: Path) -> dict:
    """What the working database holds: observations per hour, crawls marked normalized with no
    rows (or whose hour has none), crawls left pending."""
    with duckdb.connect(str(work_db_path(data_dir)), read_only=True) as con:
        per_hour = dict(con.execute(sql_text(__file__, "overlap_hours")).fetchall())
        crawls = con.execute(sql_text(__file__, "overlap_crawls")).df().iloc[0].to_dict()
    return {"per_hour": per_hour, **{name: int(value) for name, value in crawls.items()}}


def probe(pairs: int, sources: tuple[str, ...], lock_wait: float, root: Path,
          repo: Path) -> dict:
    hours = [FIRST_HOUR + timedelta(hours=n) for n in range(1 + 2 * pairs)]
    print(f"data in {root / 'data'}; {pairs} pairs over {', '.join(sources)}", flush=True)
    reference = finish(*start_run(root, sources, hours[0], lock_wait, repo))
    expected = landed(root / "data")["per_hour"].get(hours[0].strftime("%Y-%m-%dT%H"), 0)
    print(f"reference run: exit {reference['exit']}, {expected} observations for "
          f"{hours[0]:%Y-%m-%dT%H}, {reference['seconds']:.0f} s", flush=True)
    results = []
    for pair in range(pairs):
        first, second = hours[1 + 2 * pair], hours[2 + 2 * pair]
        procs = [start_run(root, sources, hour, lock_wait, repo) for hour in (first, second)]
        with ThreadPoolExecutor(2) as pool:     # each run's own end time
            runs = list(pool.map(lambda started: finish(*started), procs))
        results.append(runs)
        print(f"pair {pair + 1}: " + "; ".join(
            f"{hour:%dT%H} exit {run['exit']} {run['seconds']:.0f} s"
            + (f" (waited {run['waited']} s)" if run["waited"] is not None else "")
            + (" (locked out)" if run["locked_out"] else "")
            for hour, run in zip((first, second), runs, strict=True)), flush=True)
    state = landed(root / "data")
    short = {h: n for h, n in state["per_hour"].items() if n != expected}
    missing = [f"{h:%Y-%m-%dT%H}" for h in hours if f"{h:%Y-%m-%dT%H}" not in state["per_hour"]]
    print(f"\nhours: {len(hours)} expected, {len(state['per_hour'])} with rows; "
          f"{expected} rows expected per hour; hours short or over: {short or 'none'}; "
          f"hours missing: {missing or 'none'}")
    print(f"crawls normalized: {state['normalized_crawls']}; marked normalized with 0 rows: "
          f"{state['normalized_with_0_rows']}; marked normalized, their hour without rows: "
          f"{state['normalized_hour_without_rows']}; left pending: {state['pending']}; "
          f"quarantine rows: {state['quarantine_rows_total']}")
    exits = [run["exit"] for runs in results for run in runs]
    waits = [run["waited"] for runs in results for run in runs if run["waited"] is not None]
    print(f"exit codes: {sorted(exits)}; runs that waited for the other: {len(waits)} "
          f"(waited {min(waits, default=0)}-{max(waits, default=0)} s)")
    return {"expected_per_hour": expected, "pairs": results, **state,
            "short_hours": short, "missing_hours": missing}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--source", action="append", dest="sources")
    parser.add_argument("--lock-wait", type=float, default=1800,
                        help="GPUPRICES_LOCK_WAIT for every run (seconds)")
    parser.add_argument("--repo", type=Path, default=REPO_ROOT,
                        help="the checkout whose `pipelines.cli` runs (e.g. an older one)")
    parser.add_argument("--keep", type=Path, help="work here and keep it (default: a temp dir)")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="overlap_probe_"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        result = probe(args.pairs, tuple(args.sources or SOURCES), args.lock_wait, root,
                       args.repo.resolve())
        (root / "overlap_probe.json").write_text(json.dumps(result, indent=2, default=str),
                                                 encoding="utf-8")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
