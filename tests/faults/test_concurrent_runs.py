"""Two `gpuprices run` at once on one data directory (issue 16, part 1): the second waits for the
first (data/.run.lock), then runs; both hours land; no crawl is marked normalized without its
rows. A third run that will not wait (GPUPRICES_LOCK_WAIT=0) exits 5 at once, having done nothing.

The runs start from a copy of the session's two-source run (hour 09) over snapshots captured at
10:00 and 11:00, so each run adds its own hour. Wall times are printed as figures (`-s`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipelines.cli.exit_codes import EXIT_LOCKED
from spiders.layout import REPO_ROOT
from tests.helpers.runs import TWO_SOURCES, query
from tests.workshop.overlap_probe import landed, snapshots_at

SOURCES = ("idc_sinnet_bj", "azure")
HOURS = (10, 11)


def _env(data_dir: Path, snapshots: Path, lock_wait: str) -> dict[str, str]:
    return {**os.environ, "GPUPRICES_DATA_DIR": str(data_dir),
            "DAGSTER_HOME": str(data_dir.parent / "dagster_home"),
            "GPUPRICES_SNAPSHOT_DIR": str(snapshots), "GPUPRICES_LOCK_WAIT": lock_wait}


def _start(data_dir: Path, snapshots: Path, lock_wait: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pipelines.cli", "run", *TWO_SOURCES],
                            cwd=REPO_ROOT, env=_env(data_dir, snapshots, lock_wait),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _holder(data_dir: Path, runs: dict[int, subprocess.Popen], deadline: float = 300) -> int:
    """The hour whose run holds the lock, as soon as one does (the holder writes its pid into
    the lock file); bounded, and failing if both runs end first."""
    pids = {proc.pid: hour for hour, proc in runs.items()}
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            pid = json.loads((data_dir / ".run.lock").read_text(encoding="utf-8"))["pid"]
        except (OSError, ValueError, KeyError):
            pid = None
        if pid in pids and runs[pids[pid]].poll() is None:
            return pids[pid]
        assert any(proc.poll() is None for proc in runs.values()), "both runs ended first"
        time.sleep(0.1)   # polling for an event, bounded by the deadline
    raise AssertionError(f"no run took the lock within {deadline} s")


@pytest.fixture(scope="module")
def overlapping(two_source_run, tmp_path_factory) -> dict:
    assert two_source_run.returncode == 0, two_source_run.stdout + two_source_run.stderr
    root = tmp_path_factory.mktemp("overlap")
    data_dir = two_source_run.copy_to(root)
    state: dict = {"data_dir": data_dir,
                   "reference": query(data_dir, "select count(*) from observations")[0][0],
                   "reference_quarantine": query(data_dir, "select count(*) from quarantine")[0][0]}
    snapshots = {hour: snapshots_at(root / f"snapshots_{hour}", SOURCES,
                                    datetime(2026, 11, 30, hour, tzinfo=UTC)) for hour in HOURS}
    started = time.monotonic()
    runs = {hour: _start(data_dir, snapshots[hour], "900") for hour in HOURS}
    try:
        holding = _holder(data_dir, runs)
        asked = time.monotonic()
        state["impatient"] = subprocess.run(
            [sys.executable, "-m", "pipelines.cli", "run", *TWO_SOURCES], cwd=REPO_ROOT,
            env=_env(data_dir, snapshots[holding], "0"), capture_output=True, text=True,
            timeout=300)
        state["impatient_seconds"] = time.monotonic() - asked
        state["holder_still_running"] = runs[holding].poll() is None
        state["outputs"] = {hour: proc.communicate(timeout=1200) for hour, proc in runs.items()}
        state["codes"] = {hour: proc.returncode for hour, proc in runs.items()}
        state["seconds"] = time.monotonic() - started
    finally:
        for proc in runs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=60)
    print(f"\nfigures: two overlapping runs done in {state['seconds']:.0f} s; the run that did "
          f"not wait exited {state['impatient'].returncode} in "
          f"{state['impatient_seconds']:.1f} s")
    return state


def test_both_overlapping_runs_succeed_and_land_their_hour(overlapping):
    for hour, code in overlapping["codes"].items():
        stdout, stderr = overlapping["outputs"][hour]
        assert code == 0, stdout + stderr
    per_hour = dict(query(overlapping["data_dir"], """
        select hour(timezone('UTC', observed_hour)), count(*) from observations group by 1"""))
    reference = overlapping["reference"]
    assert per_hour == {9: reference, 10: reference, 11: reference}


def _folded(text: str) -> str:
    """The terminal output with rich's line wrapping undone."""
    return " ".join(text.split())


def test_the_second_run_waited_for_the_first(overlapping):
    waited = {hour: _folded(stdout) for hour, (stdout, _) in overlapping["outputs"].items()
              if "waiting up to 900 s for it to finish" in _folded(stdout)}
    assert len(waited) == 1
    [(hour, stdout)] = waited.items()
    holder = next(h for h in HOURS if h != hour)
    assert f"another run is using {overlapping['data_dir']} (pid " in stdout
    assert "gpuprices run (replay)" in stdout
    assert "the other run finished; waited" in stdout
    print(f"\nfigure: the {hour}:00 run waited for the {holder}:00 run: "
          + stdout.split("the other run finished; ")[1].split(" s")[0] + " s")


def test_no_crawl_is_marked_normalized_without_its_rows(overlapping):
    state = landed(overlapping["data_dir"])
    assert state["normalized_with_0_rows"] == 0
    assert state["normalized_hour_without_rows"] == 0
    assert state["pending"] == 0
    # one crawl per source per run that ran: the impatient one loaded nothing
    assert state["normalized_crawls"] == len(SOURCES) * 3


def test_each_hour_quarantines_its_own_problems_once(overlapping):
    data_dir, reference = overlapping["data_dir"], overlapping["reference_quarantine"]
    assert query(data_dir, "select count(*) from quarantine")[0][0] == 3 * reference
    assert query(data_dir, "select count(*) from quarantine where stage = 'dedupe'") == [(0,)]


def test_a_run_that_will_not_wait_exits_locked_having_done_nothing(overlapping):
    proc = overlapping["impatient"]
    assert proc.returncode == EXIT_LOCKED, proc.stdout + proc.stderr
    assert overlapping["holder_still_running"]          # it was refused while the other ran
    stderr = _folded(proc.stderr)
    assert "another run is using" in stderr and "Nothing was done" in stderr
    assert "GPUPRICES_LOCK_WAIT" in stderr
    assert "sources" not in proc.stdout                 # no summary: it never started
