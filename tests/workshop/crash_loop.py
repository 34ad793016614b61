"""Figures, not a test: `gpuprices run` SIGKILLed at K random moments, each followed by the same
run to the end, checked against a run that was never interrupted.
`python -m tests.workshop.crash_loop [--kills 20] [--seed N] [--source S ...] [--keep DIR]`.

A reference first, on a temporary data directory: a run over hour H (the bundled snapshots of a
few sources, captured at H), then a run over H+1 (the same snapshots an hour later), timed and
its file events recorded. Then each kill point starts from a copy of the state after the H run,
starts the H+1 run in its own session and SIGKILLs the whole group: most at a moment drawn
uniformly over the reference H+1 run's duration; some inside the publish window (the first write
to `data/.prices.db.<pid>.tmp`, or its creation plus a random delay: both sides of the rename); some
at DuckDB's writes (the n-th creation of the working database's WAL, then its m-th write or a
write to the main file). Right after the kill a reader opens `data/prices.db` (old or new, never
broken); then the H+1 run goes again to the end and must exit 0 and leave observations, every
model table, the quarantine and the published database equal to the reference (bookkeeping
columns aside), no crawl pending or marked normalized without rows, no `dedupe` quarantine and
no temporary copy left. One line per kill point, then a summary; exit 1 when any failed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from spiders.layout import REPO_ROOT, db_path, work_db_path
from tests.workshop.crash_loop_checks import (
    Event,
    FileEvents,
    Trigger,
    compare_tables,
    crawl_problems,
    is_publish_tmp,
    phase,
    published_problems,
    published_state,
    table_contents,
)
from tests.workshop.overlap_probe import snapshots_at

SOURCES = ("idc_sinnet_bj", "azure")
# An hour in the past (the batch checks refuse observations from the future), then the next.
HOUR = datetime(2026, 11, 28, 9, tzinfo=UTC)
RUN_LIMIT_SECONDS = 1800     # only keeps a hung run from hanging the loop


def _env(root: Path, snapshots: Path) -> dict[str, str]:
    env = {**os.environ, "GPUPRICES_DATA_DIR": str(root / "data"),
           "DAGSTER_HOME": str(root / "dagster_home"), "GPUPRICES_SNAPSHOT_DIR": str(snapshots)}
    for name in ("GPUPRICES_REPLAY_URL", "GPUPRICES_MODE"):
        env.pop(name, None)
    return env


def watched_run(root: Path, snapshots: Path, sources: tuple[str, ...], log: Path,
                trigger: Trigger | None = None) -> dict:
    """`gpuprices run` on `root/data` over `snapshots`, its file events recorded; with a
    trigger, its process group SIGKILLed when the trigger fires (if the run has not ended)."""
    events = FileEvents(root / "data")
    args = [arg for source in sources for arg in ("--source", source)]
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "run", *args],
                                cwd=REPO_ROOT, env=_env(root, snapshots), stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    pending = list(trigger.steps) if trigger else []
    kill_at = trigger.delay if trigger and not pending else None
    seen, recorded, killed_at = 0, [], None
    try:
        while proc.poll() is None:
            now = time.monotonic() - started
            if kill_at is not None and now >= kill_at:
                os.killpg(proc.pid, signal.SIGKILL)    # the run, its crawls, its replay server
                killed_at = now
                break
            if now > RUN_LIMIT_SECONDS:
                raise TimeoutError(f"run in {root} still going after {RUN_LIMIT_SECONDS} s")
            wait = 0.05 if kill_at is None else min(0.05, kill_at - now)
            for event in events.read(wait, started):
                recorded.append(event)
                if pending and trigger.matches(pending[0], event):
                    seen += 1
                    if seen == pending[0][3]:
                        pending.pop(0)
                        seen = 0
                        if not pending:
                            kill_at = event.seconds + trigger.then
        proc.wait(timeout=60)
        recorded += events.read(0, started)
    finally:
        events.close()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
    return {"exit": proc.returncode, "seconds": time.monotonic() - started,
            "killed_at": killed_at, "events": recorded}


def _observations(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("select count(*) from observations").fetchone()[0]


def _copy_state(base: Path, target: Path) -> None:
    for name in ("data", "dagster_home"):
        shutil.copytree(base / name, target / name, symlinks=True)


def reference(root: Path, sources: tuple[str, ...]) -> dict:
    """The H run (the state every kill point starts from) and the uninterrupted H+1 run."""
    snapshots = {hour: snapshots_at(root / "snapshots" / f"{hour:%Y%m%dT%H}", sources, hour)
                 for hour in (HOUR, HOUR + timedelta(hours=1))}
    base, next_hour = root / "base", root / "reference"
    first = watched_run(base, snapshots[HOUR], sources, root / "base.log")
    if first["exit"] != 0:
        raise SystemExit(f"the reference run over {HOUR:%Y-%m-%dT%H} exited {first['exit']}: "
                         f"see {root / 'base.log'}")
    _copy_state(base, next_hour)
    second = watched_run(next_hour, snapshots[HOUR + timedelta(hours=1)], sources,
                         root / "reference.log")
    if second["exit"] != 0:
        raise SystemExit(f"the reference run over the next hour exited {second['exit']}")
    events: list[Event] = second["events"]
    tmp_made = [e.seconds for e in events if e.kind == "create" and is_publish_tmp(e.name)]
    renamed = [e.seconds for e in events if e.kind == "moved" and is_publish_tmp(e.name)]
    work = work_db_path(next_hour / "data")
    return {
        "base": base, "snapshots": snapshots[HOUR + timedelta(hours=1)],
        "first_seconds": first["seconds"], "seconds": second["seconds"],
        "wal_creations": sum(1 for e in events if e.where == "work" and e.kind == "create"
                             and e.name == "prices.db.wal"),
        "publish_seconds": (renamed[-1] - tmp_made[-1]) if tmp_made and renamed else 0.05,
        "publish_starts_at": tmp_made[-1] if tmp_made else None,
        "publish_writes": sum(1 for e in events if e.kind == "modify" and is_publish_tmp(e.name)),
        "old_rows": _observations(db_path(base / "data")),
        "new_rows": _observations(db_path(next_hour / "data")),
        "work": table_contents(work),
        "published": table_contents(db_path(next_hour / "data")),
    }


def plan(kills: int, rng: random.Random, ref: dict) -> list[tuple[str, Trigger]]:
    """The kill points: at least 4 in the publish window (half at the copy's first write,
    before the rename; half at a random moment up to 3 times the reference's copy-to-rename
    time after the copy is created), some at DuckDB writes, the rest at uniform moments."""
    in_publish = max(4, kills // 5)
    at_writes = min(max(3, kills // 5), max(kills - in_publish, 0))
    window = max(ref["publish_seconds"], 0.005)
    points: list[tuple[str, Trigger]] = []
    for n in range(in_publish):
        if n % 2 == 0 and ref["publish_writes"]:   # the copy under way: before the rename
            points.append(("publish", Trigger(steps=[("data", "modify", "publish-tmp", 1)])))
        else:                                      # a random moment around the rename
            points.append(("publish", Trigger(steps=[("data", "create", "publish-tmp", 1)],
                                              then=rng.uniform(0, 3 * window))))
    for _ in range(at_writes):
        wal = rng.randint(1, max(ref["wal_creations"], 1))
        name = rng.choice(["prices.db.wal", "prices.db"])
        points.append(("write", Trigger(steps=[("work", "create", "prices.db.wal", wal),
                                               ("work", "modify", name, rng.randint(1, 2))])))
    for _ in range(max(kills - in_publish - at_writes, 0)):
        points.append(("uniform", Trigger(delay=rng.uniform(0, ref["seconds"]))))
    rng.shuffle(points)
    return points


def describe(kind: str, trigger: Trigger) -> str:
    if kind == "uniform":
        return f"at {trigger.delay:.2f} s"
    if kind == "publish" and trigger.steps[0][1] == "modify":
        return "publish tmp, its first write"
    if kind == "publish":
        return f"publish tmp created +{trigger.then * 1000:.0f} ms"
    (_, _, _, wal), (_, _, name, writes) = trigger.steps
    return f"WAL #{wal}, write {writes} to {name}"


def kill_point(number: int, kind: str, trigger: Trigger, ref: dict, root: Path,
               sources: tuple[str, ...]) -> dict:
    """One kill, what a reader saw right after it, the rerun and every check."""
    work_root = root / f"kill{number:02d}"
    _copy_state(ref["base"], work_root)
    data = work_root / "data"
    killed = watched_run(work_root, ref["snapshots"], sources, work_root / "killed.log", trigger)
    seen, problems = published_state(db_path(data), ref["old_rows"], ref["new_rows"])
    tmp_after_kill = sorted(p.name for p in data.glob(".prices.db.*.tmp"))
    rerun = watched_run(work_root, ref["snapshots"], sources, work_root / "rerun.log")
    if rerun["exit"] != 0:
        problems.append(f"rerun exited {rerun['exit']} (see {work_root / 'rerun.log'})")
    else:
        problems += compare_tables(table_contents(work_db_path(data)), ref["work"],
                                   "working ")
        problems += compare_tables(table_contents(db_path(data)), ref["published"],
                                   "published ")
        problems += crawl_problems(work_db_path(data))
        problems += published_problems(data)
    was_killed = killed["killed_at"] is not None
    events = [e for e in killed["events"] if killed["killed_at"] is None
              or e.seconds <= killed["killed_at"]]
    return {"number": number, "kind": kind, "trigger": describe(kind, trigger),
            "killed": was_killed,
            "killed_at": killed["killed_at"], "exit_of_killed": killed["exit"],
            "phase": phase(events) if was_killed else "ended before the kill",
            "published_after_kill": seen, "tmp_after_kill": tmp_after_kill,
            "rerun_exit": rerun["exit"], "rerun_seconds": rerun["seconds"],
            "problems": problems, "dir": str(work_root)}


def line(result: dict) -> str:
    when = (f"killed at {result['killed_at']:6.2f} s" if result["killed"]
            else f"not killed (exit {result['exit_of_killed']})")
    verdict = ("recovered, equal" if not result["problems"]
               else "FAILED: " + "; ".join(result["problems"]))
    tmp = f", {len(result['tmp_after_kill'])} tmp left by the kill" \
        if result["tmp_after_kill"] else ""
    return (f"{result['number']:2d} {result['kind']:7s} {result['trigger']:34s} {when} "
            f"({result['phase']}); prices.db after kill: {result['published_after_kill']}{tmp}; "
            f"rerun exit {result['rerun_exit']} in {result['rerun_seconds']:.0f} s; {verdict}")


def summary(results: list[dict]) -> list[str]:
    killed = [r for r in results if r["killed"]]
    publish = [r for r in killed if r["phase"].startswith("publish")]
    failed = [r for r in results if r["problems"]]
    by_phase: dict[str, int] = {}
    for result in killed:
        group = "DuckDB writes" if result["phase"].startswith("DuckDB") else result["phase"]
        by_phase[group] = by_phase.get(group, 0) + 1
    writes = sorted(int(r["phase"].rsplit(" ", 1)[1]) for r in killed
                    if r["phase"].startswith("DuckDB"))
    lines = [f"kill points: {len(results)}; killed: {len(killed)} (the others ended first)",
             "phases: " + ", ".join(f"{p} {n}" for p, n in sorted(by_phase.items()))
             + f" (during writes number {', '.join(map(str, writes)) or '-'})",
             f"in the publish window: {len(publish)} (before the rename "
             f"{sum(r['phase'].endswith('before the rename') for r in publish)}, after "
             f"{sum(r['phase'].endswith('after the rename') for r in publish)}); "
             f"prices.db right after the kill: old "
             f"{sum(r['published_after_kill'] == 'old' for r in results)}, new "
             f"{sum(r['published_after_kill'] == 'new' for r in results)}, otherwise "
             f"{sum(r['published_after_kill'] not in ('old', 'new') for r in results)}",
             f"recovered equal to the reference: {len(results) - len(failed)} of {len(results)}"]
    lines += [f"FAILED {r['number']} ({r['trigger']}, {r['phase']}): "
              + "; ".join(r["problems"]) + f" [{r['dir']}]" for r in failed]
    return lines


def crash_loop(kills: int, seed: int, sources: tuple[str, ...], root: Path) -> int:
    started = time.monotonic()
    print(f"data in {root}; {kills} kill points, seed {seed}, sources {', '.join(sources)}",
          flush=True)
    ref = reference(root, sources)
    print(f"reference: run over {HOUR:%Y-%m-%dT%H} {ref['first_seconds']:.1f} s "
          f"({ref['old_rows']} observations); the next hour {ref['seconds']:.1f} s "
          f"({ref['new_rows']} observations, {ref['wal_creations']} WAL creations, publish tmp "
          f"at {ref['publish_starts_at'] or 0:.2f} s, renamed "
          f"{ref['publish_seconds'] * 1000:.0f} ms later)", flush=True)
    results = []
    for number, (kind, trigger) in enumerate(plan(kills, random.Random(seed), ref), start=1):
        result = kill_point(number, kind, trigger, ref, root, sources)
        results.append(result)
        print(line(result), flush=True)
        if not result["problems"]:
            shutil.rmtree(result["dir"], ignore_errors=True)   # failed ones stay to be read
    print("", *summary(results), f"wall time {time.monotonic() - started:.0f} s", sep="\n")
    (root / "crash_loop.json").write_text(json.dumps(results, indent=2, default=str),
                                          encoding="utf-8")
    return 1 if any(r["problems"] for r in results) else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--source", action="append", dest="sources")
    parser.add_argument("--keep", type=Path, help="work here and keep it (default: a temp dir)")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="crash_loop_"))
    root.mkdir(parents=True, exist_ok=True)
    status = 1
    try:
        status = crash_loop(args.kills, args.seed, tuple(args.sources or SOURCES), root)
    finally:
        if not args.keep and status == 0:
            shutil.rmtree(root, ignore_errors=True)
        elif status:
            print(f"kept for inspection: {root}")
    sys.exit(status)


if __name__ == "__main__":
    main()
