"""(g) The test suite on a fresh clone: `--suite` clones the repository's committed state, runs
`make test`'s pytest there and records the figure in data/bench/suite-<UTC time>.json; every other
bench run reports the last recorded figure (the suite takes minutes: it is not run each time)."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.workshop.bench.config import say

SUITE_COMMAND = (".venv/bin/python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                 "--tier", "fast")
SUITE_TIMEOUT_SECONDS = 3 * 3600
_COUNT = re.compile(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?|deselected|warnings?)")


def summary_counts(output: str) -> dict[str, int]:
    """pytest's closing line (`812 passed, 3 skipped, 1 xfailed in 600.12s`) as counts."""
    lines = [line for line in output.splitlines() if re.search(r"\bin [\d.]+s\b", line)]
    if not lines:
        return {}
    return {kind.rstrip("s") if kind.startswith(("error", "warning")) else kind: int(n)
            for n, kind in _COUNT.findall(lines[-1])}


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def suite_bench(repo: Path, out_dir: Path, extra_args: tuple[str, ...] = (),
                venv: Path | None = None) -> dict[str, Any]:
    """Clone `repo` (its committed HEAD: a clean clone, no local changes, no data), give the clone
    this venv as `.venv` (the locked dependencies `make setup` would install) and run
    SUITE_COMMAND in it as `make test` does (its own DAGSTER_HOME; PYTHONPATH on the clone so
    that subprocesses import the clone's code, not the editable install's). Writes the figure to
    `out_dir`/suite-<UTC time>.json and returns it."""
    venv = venv or Path(sys.prefix)
    with tempfile.TemporaryDirectory(prefix="gpuprices-suite-") as tmp:
        clone = Path(tmp) / "gpuprices"
        say(f"suite: cloning {repo}")
        subprocess.run(["git", "clone", "--quiet", str(repo), str(clone)], check=True,
                       capture_output=True, text=True, timeout=600)
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True,
                                text=True, timeout=60).stdout.strip()
        (clone / ".venv").symlink_to(venv, target_is_directory=True)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GPUPRICES_", "PYTEST_")) and k != "DAGSTER_HOME"}
        env.update(PYTHONPATH=str(clone), DAGSTER_HOME=str(clone / ".dagster_home"))
        command = [*SUITE_COMMAND, *extra_args]
        say(f"suite: {' '.join(command)} (minutes)")
        cpu_before, load_start = _children_cpu_seconds(), os.getloadavg()
        started = time.perf_counter()
        try:
            proc = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True,
                                  timeout=SUITE_TIMEOUT_SECONDS)
            exit_code, output = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as exc:
            exit_code, output = None, f"timed out after {exc.timeout} s"
        seconds = time.perf_counter() - started
        cpu = _children_cpu_seconds() - cpu_before
    finished = datetime.now(UTC)
    record = {"seconds": seconds, "exit_code": exit_code, "passed": exit_code == 0,
              "counts": summary_counts(output), "commit": commit, "command": " ".join(command),
              "cpu_seconds": cpu, "cpu_share_of_one_core": cpu / seconds if seconds else None,
              "cpus": os.cpu_count(), "load_average_start": load_start,
              "load_average_end": os.getloadavg(),
              "finished_at": finished.isoformat(timespec="seconds"),
              "output_tail": output.splitlines()[-15:]}
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"suite-{finished:%Y%m%dT%H%M%SZ}.json"
    out.write_text(json.dumps(record, indent=1), encoding="utf-8")
    record["recorded_in"] = str(out)
    return record


def last_suite_figure(out_dir: Path) -> dict[str, Any] | None:
    """The newest recorded suite figure in `out_dir`, or None when none was ever recorded (or the
    newest cannot be read)."""
    records = sorted(out_dir.glob("suite-*.json"))
    if not records:
        return None
    try:
        record = json.loads(records[-1].read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return {**record, "recorded_in": str(records[-1])} if isinstance(record, dict) else None
