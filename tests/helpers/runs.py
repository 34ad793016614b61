"""`gpuprices` as a user runs it: a subprocess on a temporary data directory (the real Dagster
job over the replay server for `run`), and reading the database it published."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb

from spiders.layout import REPO_ROOT, SNAPSHOT_DIR


def gpuprices(data_dir: Path, *args: str,
              snapshots: Path = SNAPSHOT_DIR) -> subprocess.CompletedProcess:
    env = {**os.environ, "GPUPRICES_DATA_DIR": str(data_dir),
           "DAGSTER_HOME": str(data_dir.parent / "dagster_home"),
           "GPUPRICES_SNAPSHOT_DIR": str(snapshots)}
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def query(data_dir: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(data_dir / "prices.db"), read_only=True) as con:
        return con.execute(sql).fetchall()
