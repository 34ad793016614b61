"""(f) CLI start-up: `gpuprices --help` and a read-only command (`gpuprices prices --limit 1`) on
a small published database, each a real subprocess run several times (the median is the figure;
the first, cold run is kept apart), and which heavy frameworks each command imports."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from spiders.layout import REPO_ROOT, db_path, work_simulated_db_path
from tests.workshop.bench.config import HISTORY_START, SEED, STARTUP_HEAVY_MODULES, say

COMMANDS: dict[str, list[str]] = {
    "help": ["--help"],
    # --max-age all: the bench's history has fixed dates (HISTORY_START), older than the horizon
    # of "now" as the calendar moves on; what is timed is the command, not what it leaves out
    "prices": ["prices", "--limit", "1", "--max-age", "all"],
}


def gpuprices_command() -> list[str]:
    """The installed entry point, as users run it (or the same `main` through Python)."""
    script = Path(sys.executable).with_name("gpuprices")
    return [str(script)] if script.exists() else [
        sys.executable, "-c", "from pipelines.cli import main; main()"]


def small_published_db(data: Path, offers_file: Path, days: int = 1) -> Path:
    """`data/prices.db` as a run publishes it: one simulated day of the bench's offers, every
    model built, published with the product's own `publish_database`."""
    import pandas as pd

    from pipelines.publish import publish_database
    from pipelines.simulate import simulate

    work = work_simulated_db_path(data)
    work.parent.mkdir(parents=True, exist_ok=True)
    simulate(work, start=HISTORY_START, days=days, offers=pd.read_pickle(offers_file), seed=SEED)
    publish_database(work, db_path(data))
    return db_path(data)


def heavy_imports(args: list[str], env: dict[str, str]) -> list[str]:
    """The heavy frameworks a command imports: one run under `python -X importtime`, whose
    stderr names every module imported."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c",
                           "from pipelines.cli import main; main()", *args],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0]
                for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return sorted(imported & set(STARTUP_HEAVY_MODULES))


def time_command(args: list[str], env: dict[str, str], runs: int) -> dict[str, Any]:
    """`runs` subprocess runs of `gpuprices <args>`: wall times, the median of the warm runs (the
    first is the cold one) and the exit codes."""
    seconds, codes = [], []
    for _ in range(max(2, runs + 1)):
        started = time.perf_counter()
        proc = subprocess.run([*gpuprices_command(), *args], cwd=REPO_ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              timeout=120)
        seconds.append(time.perf_counter() - started)
        codes.append(proc.returncode)
        if proc.returncode != 0:   # a failing command's time is not its start-up
            return {"args": args, "exit_codes": codes, "all_seconds": seconds,
                    "median_seconds": None, "cold_seconds": seconds[0],
                    "error": proc.stderr.strip().splitlines()[-3:]}
    return {"args": args, "exit_codes": codes, "all_seconds": seconds,
            "cold_seconds": seconds[0], "median_seconds": statistics.median(seconds[1:])}


def startup_bench(root: Path, offers_file: Path, runs: int = 5,
                  db: Path | None = None) -> dict[str, Any]:
    """Each command of COMMANDS timed against a small published database: `db` when given (the
    whole run's), else one built from the bench's offers under `root`."""
    data = root / "data"
    if db is None or not db.is_file():
        say("start-up: publishing a one-day database")
        db = small_published_db(data, offers_file)
    else:
        data = db.parent
    env = {**os.environ, "GPUPRICES_DATA_DIR": str(data)}
    figures: dict[str, Any] = {"db_path": str(db), "db_bytes": db.stat().st_size, "runs": runs}
    for name, args in COMMANDS.items():
        say(f"start-up: gpuprices {' '.join(args)} x {runs + 1}")
        figures[name] = {**time_command(args, env, runs), "heavy_imports": heavy_imports(args, env)}
    return figures
