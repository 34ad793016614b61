"""`gpuprices` as a user runs it: a subprocess on a temporary data directory (the real Dagster
job over the replay server for `run`), and reading the database it published. A run that tests
only read is made once per session and shared by every xdist worker (`shared_run`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb

from spiders.default_sources import OPT_IN_ENV
from spiders.layout import REPO_ROOT, SNAPSHOT_DIR
from tests.helpers.shared import made_once

# an HTML source and a paged JSON one: the pair the fault and bad-input tests run
TWO_SOURCES = ("--source", "idc_sinnet_bj", "--source", "azure")


# The suite's runs test the pipeline's mechanics on every snapshot, the illustrative and
# template fixtures included, so they opt in to all of them (spiders/default_sources.py); the
# default run, which crawls none of those, is `default_run` (opt_in=None).
OPT_IN_ALL = "all"


def _env(data_dir: Path, snapshots: Path, opt_in: str | None = OPT_IN_ALL) -> dict[str, str]:
    env = {**os.environ, "GPUPRICES_DATA_DIR": str(data_dir),
           "DAGSTER_HOME": str(data_dir.parent / "dagster_home"),
           "GPUPRICES_SNAPSHOT_DIR": str(snapshots)}
    env.pop(OPT_IN_ENV, None)
    if opt_in is not None:
        env[OPT_IN_ENV] = opt_in
    return env


def gpuprices(data_dir: Path, *args: str, snapshots: Path = SNAPSHOT_DIR,
              opt_in: str | None = OPT_IN_ALL) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], cwd=REPO_ROOT,
                          env=_env(data_dir, snapshots, opt_in), capture_output=True, text=True,
                          timeout=600)


def query(data_dir: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(data_dir / "prices.db"), read_only=True) as con:
        return con.execute(sql).fetchall()


@dataclass(frozen=True)
class SharedRun:
    """`gpuprices run` over the bundled snapshots, made once for the tests that only read it: its
    data directory (beside it the run's DAGSTER_HOME) and what it printed. Read it, never write
    into it: a test that runs again on top of it works on `copy_to(tmp_path)`."""
    data_dir: Path
    returncode: int
    stdout: str
    stderr: str

    def copy_to(self, root: Path) -> Path:
        """The data directory and DAGSTER_HOME copied under `root`; returns the copy's data
        directory."""
        for name in (self.data_dir.name, "dagster_home"):
            shutil.copytree(self.data_dir.parent / name, root / name)
        return root / self.data_dir.name


def shared_run(root: Path, *args: str, opt_in: str | None = OPT_IN_ALL) -> SharedRun:
    """`gpuprices run *args` under `root`, made once per session by whichever process asks first
    (tests/helpers/shared.py: xdist workers share `root`); the others read its outcome. The
    installed `gpuprices` console script runs it (the other runs in the suite go through
    `python -m pipelines.cli`)."""
    def run(root: Path) -> SharedRun:
        data_dir = root / "data"
        proc = subprocess.run([str(Path(sys.executable).parent / "gpuprices"), "run", *args],
                              cwd=REPO_ROOT, env=_env(data_dir, SNAPSHOT_DIR, opt_in),
                              capture_output=True, text=True, timeout=600)
        return SharedRun(data_dir, proc.returncode, proc.stdout, proc.stderr)
    return made_once(root, run)
