"""End to end: `GPUPRICES_EXECUTOR=multiprocess gpuprices run` (a process per step, one crawl step
and one load step per source, the DuckDB steps taking turns in the duckdb_writer pool) builds the
same tables as the default in-process run over the same snapshots."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pytest

from spiders.layout import REPO_ROOT

# A plain-HTTP source, a token-only one (autodl_cn, run with a fake token: replay matches no
# header), and two whose quarantine is not empty, at a third of the full run's step count.
SOURCES = ("azure", "autodl_cn", "idc_sinnet_bj", "vastai")
FAKE_TOKENS = {"AUTODL_TOKEN": "fake-autodl-token-for-replay"}
# Columns that name the run or the moment it ran, not what it found.
RUN_COLUMNS = {"crawl_id", "run_id", "quarantined_at"}


def gpuprices_run(root: Path, executor: str | None) -> subprocess.CompletedProcess:
    home = root / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy(REPO_ROOT / "dagster.yaml", home / "dagster.yaml")  # the pool limit
    env = {**os.environ, "GPUPRICES_DATA_DIR": str(root / "data"), "DAGSTER_HOME": str(home)}
    env.pop("GPUPRICES_EXECUTOR", None)
    env.update(FAKE_TOKENS)
    if executor:
        env["GPUPRICES_EXECUTOR"] = executor
    args = [arg for source in SOURCES for arg in ("--source", source)]
    return subprocess.run([sys.executable, "-m", "pipelines.cli", "run", *args], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=1500)


def tables(data_dir: Path) -> dict[str, list[tuple]]:
    """observations, quarantine and every mart: their rows (as a sorted multiset), without the
    columns that name the run."""
    found = {}
    with duckdb.connect(str(data_dir / "prices.db"), read_only=True) as con:
        names = ["observations", "quarantine"] + [
            f"marts.{t}" for (t,) in con.execute(
                "select table_name from information_schema.tables where table_schema = 'marts'"
            ).fetchall()]
        for name in names:
            schema, _, table = name.rpartition(".")
            columns = [c for (c,) in con.execute(
                "select column_name from information_schema.columns where table_schema = ? "
                "and table_name = ? order by ordinal_position",
                [schema or "main", table]).fetchall() if c not in RUN_COLUMNS]
            found[name] = sorted(con.execute(
                f"select {', '.join(columns)} from {name}").fetchall(), key=repr)
    return found


def step_keys(home: Path) -> set[str]:
    """The step keys of the one run stored in a Dagster home."""
    script = ("import dagster as dg; i = dg.DagsterInstance.get(); [r] = i.get_runs(); "
              "print('\\n'.join(sorted({e.step_key for e in i.all_logs(r.run_id) "
              "if e.step_key})))")
    proc = subprocess.run([sys.executable, "-c", script], env={**os.environ,
                          "DAGSTER_HOME": str(home)}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return set(proc.stdout.split())


@pytest.fixture(scope="module")
def both_runs(tmp_path_factory):
    default = tmp_path_factory.mktemp("in_process")
    multiprocess = tmp_path_factory.mktemp("multiprocess")
    # side by side: separate data directories and Dagster homes, so neither waits for the other
    with ThreadPoolExecutor(2) as pool:
        started = {"default": pool.submit(gpuprices_run, default, None),
                   "multiprocess": pool.submit(gpuprices_run, multiprocess, "multiprocess")}
        runs = {name: future.result() for name, future in started.items()}
    for name, proc in runs.items():
        assert proc.returncode == 0, f"{name}:\n{proc.stdout}\n{proc.stderr[-5000:]}"
    return default, multiprocess, runs


def test_multiprocess_run_builds_the_same_tables(both_runs):
    default, multiprocess, _ = both_runs
    expected, got = tables(default / "data"), tables(multiprocess / "data")
    assert set(got) == set(expected)
    assert len(expected["observations"]) > 100 and expected["quarantine"]
    for name in expected:
        assert got[name] == expected[name], name


def test_multiprocess_run_crawls_each_source_in_its_own_steps(both_runs):
    default, multiprocess, runs = both_runs
    # rich wraps the header at the console width, and a long data path moves the break
    assert "(multiprocess executor)" in " ".join(runs["multiprocess"].stdout.split())
    keys = step_keys(multiprocess / "dagster_home")
    for source in SOURCES:
        assert {f"raw__{source}.crawl_{source}", f"raw__{source}.load_{source}"} <= keys
    assert "raw_offers" not in keys
    assert "raw_offers" in step_keys(default / "dagster_home")   # the default: one crawl step
