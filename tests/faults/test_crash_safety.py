"""Crash safety: `gpuprices run` SIGKILLed in the middle of a write, then run again.

The kill comes at a moment the test observes, not after a guessed sleep: a write to the working
database. Each writing asset opens `data/.work/prices.db`, commits its transaction (DuckDB
appends it to `prices.db.wal`), and on closing checkpoints it into `prices.db` and deletes the
WAL; so "the 3rd WAL's first write" is inside the 3rd writing asset's commit. The publish step is
caught when it creates its temporary copy `data/.prices.db.<pid>.tmp`. Linux inotify (through
ctypes) reports each of those file events as it happens, and the run is killed at once.

After the kill: the working database opens intact, the next run recovers (exit 0), and its tables
equal those of a run that was never interrupted; a kill while publishing leaves `data/prices.db`
whole (the old file or the new one).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from spiders.layout import REPO_ROOT, SNAPSHOT_DIR
from tests.helpers.runs import TWO_SOURCES

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="inotify is Linux's")

SOURCES = ("idc_sinnet_bj", "azure")
RUN = ("run", *(arg for s in SOURCES for arg in ("--source", s)))
IN_MODIFY, IN_CREATE = 0x2, 0x100
DB, WAL = "prices.db", "prices.db.wal"
# Bookkeeping that differs between any two runs: which crawl, when it was quarantined.
BOOKKEEPING = {"crawl_id", "quarantined_at"}

Step = tuple[str, Callable[[str], bool], int]   # ("create" | "modify", file name test, how many)


def named(file_name: str) -> Callable[[str], bool]:
    return lambda name: name == file_name


class FileEvents:
    """File creations and writes in a directory, as they happen (inotify)."""

    def __init__(self, directory: Path) -> None:
        self._libc = ctypes.CDLL("libc.so.6", use_errno=True)
        self._fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        assert self._fd >= 0, os.strerror(ctypes.get_errno())
        directory.mkdir(parents=True, exist_ok=True)
        assert self._libc.inotify_add_watch(self._fd, str(directory).encode(),
                                            IN_CREATE | IN_MODIFY) >= 0

    def wait_for(self, steps: list[Step], proc: subprocess.Popen,
                 deadline_seconds: float = 600) -> bool:
        """Block until each step happened in turn (e.g. the 3rd creation of the WAL, then the
        1st write to it); False if `proc` ended first. The deadline only keeps a broken run
        from hanging the suite."""
        pending, seen = list(steps), 0
        end = time.monotonic() + deadline_seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([self._fd], [], [], 0.2)
            if not ready:
                if proc.poll() is not None:
                    return False
                continue
            buffer, offset = os.read(self._fd, 65536), 0
            while offset < len(buffer):
                _, mask, _, length = struct.unpack_from("iIII", buffer, offset)
                name = buffer[offset + 16:offset + 16 + length].rstrip(b"\0").decode()
                offset += 16 + length
                kind, matches, times = pending[0]
                if (mask & (IN_CREATE if kind == "create" else IN_MODIFY)) and matches(name):
                    seen += 1
                    if seen == times:
                        pending.pop(0)
                        seen = 0
                        if not pending:
                            return True
        raise AssertionError(f"{steps} did not all happen within {deadline_seconds} s")

    def close(self) -> None:
        os.close(self._fd)


def _env(data_dir: Path, snapshots: Path) -> dict[str, str]:
    return {**os.environ, "GPUPRICES_DATA_DIR": str(data_dir),
            "DAGSTER_HOME": str(data_dir.parent / "dagster_home"),
            "GPUPRICES_SNAPSHOT_DIR": str(snapshots)}


def run_to_the_end(data_dir: Path, snapshots: Path = SNAPSHOT_DIR) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *RUN], cwd=REPO_ROOT,
                          env=_env(data_dir, snapshots), capture_output=True, text=True,
                          timeout=600)


def kill_at(data_dir: Path, watch_dir: Path, steps: list[Step],
            snapshots: Path = SNAPSHOT_DIR) -> bool:
    """Start a run, SIGKILL it the moment `steps` happened in `watch_dir`. True when it was
    killed, False when it finished first."""
    watch = FileEvents(watch_dir)
    proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", *RUN], cwd=REPO_ROOT,
                            env=_env(data_dir, snapshots), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        hit = watch.wait_for(steps, proc)
        if hit:
            # its own session: the run and any crawl it started
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        return hit and proc.returncode == -signal.SIGKILL
    finally:
        watch.close()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)


def user_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """observations, quarantine and every model table (staging, intermediate, marts)."""
    rows = con.execute("""select table_schema, table_name from information_schema.tables
                          where table_type = 'BASE TABLE'
                            and (table_schema in ('staging', 'intermediate', 'marts')
                                 or (table_schema = 'main'
                                     and table_name in ('observations', 'quarantine')))
                          order by all""").fetchall()
    return [f"{schema}.{table}" for schema, table in rows]


def contents(db: Path) -> dict[str, list[tuple]]:
    """Every user table's rows (bookkeeping columns left out), sorted."""
    with duckdb.connect(str(db), read_only=True) as con:
        tables = {}
        for table in user_tables(con):
            schema, name = table.split(".")
            columns = [c for (c,) in con.execute(
                "select column_name from information_schema.columns where table_schema = ? "
                "and table_name = ? order by ordinal_position", [schema, name]).fetchall()
                if c not in BOOKKEEPING]
            select = ", ".join(f'"{c}"' for c in columns)
            tables[table] = con.execute(f"select {select} from {table} order by all").fetchall()
        return tables


def opens_intact(work_db: Path, scratch: Path) -> dict[str, int]:
    """Open a copy of the (killed) working database as the next run would: WAL replayed, size
    readable, every table queryable. Returns the row count per table."""
    scratch.mkdir(parents=True, exist_ok=True)
    for suffix in ("", ".wal"):
        if Path(f"{work_db}{suffix}").exists():
            shutil.copyfile(f"{work_db}{suffix}", scratch / f"prices.db{suffix}")
    with duckdb.connect(str(scratch / "prices.db")) as con:
        [size] = con.execute("pragma database_size").fetchall()
        assert size[0] == "prices"
        tables = con.execute("select table_schema || '.' || table_name "
                             "from information_schema.tables "
                             "where table_type = 'BASE TABLE'").fetchall()
        return {t: con.execute(f"select count(*) from {t}").fetchone()[0] for (t,) in tables}


@pytest.fixture(scope="session")
def uninterrupted(two_source_run) -> Path:
    """The same two sources run to the end (the session's run, tests/conftest.py): only read."""
    assert ("run", *TWO_SOURCES) == RUN          # the same run as the killed ones
    assert two_source_run.returncode == 0, two_source_run.stdout + two_source_run.stderr
    return two_source_run.data_dir


# Where to kill: inside the raw load's commit (raw.crawls, raw.offers), inside its checkpoint into
# the main file (WAL still there), inside the 3rd writing asset's commit (observations: the
# validated batch joins the history), a few models into the SQL models (the 4th writing step
# builds them all on one connection, each model a commit of about 5 writes to its WAL; inotify
# merges writes a busy reader has not read yet, so a count of writes lands later under load, and
# 12 of about 115 leaves room), and inside that step's checkpoint when it closes.
KILL_POINTS = {
    "raw-load-commit": [("create", named(WAL), 1), ("modify", named(WAL), 4)],
    "raw-load-checkpoint": [("create", named(WAL), 1), ("modify", named(DB), 3)],
    "history-insert-commit": [("create", named(WAL), 3), ("modify", named(WAL), 1)],
    "sql-models-midway": [("create", named(WAL), 4), ("modify", named(WAL), 12)],
    "sql-model-checkpoint": [("create", named(WAL), 4), ("modify", named(DB), 1)],
}
_recovered: dict[str, dict] = {}


def killed_then_rerun(point: str, tmp_path_factory) -> dict:
    """Kill a run at `point`, inspect what it left, run again to the end (cached per point)."""
    if point not in _recovered:
        root = tmp_path_factory.mktemp(point)
        data_dir, work = root / "data", root / "data" / ".work"
        killed = kill_at(data_dir, work, KILL_POINTS[point])
        left = opens_intact(work / "prices.db", root / "scratch") if killed else {}
        rerun = run_to_the_end(data_dir)
        _recovered[point] = {"killed": killed, "left": left, "rerun": rerun, "data_dir": data_dir}
    return _recovered[point]


def quarantined(rows: list[tuple]) -> set[tuple]:
    """What was quarantined and why, whichever crawl: a run that finishes a killed run's loaded
    crawls and crawls the same hour again has each row twice (quarantine is kept per crawl),
    plus 'dedupe' rows for the second crawl (see test_recovery_quarantines_no_duplicates)."""
    # columns: source, item_no, stage, reason, raw_item
    return {r for r in rows if r[2] != "dedupe"}


@pytest.mark.parametrize("point", KILL_POINTS)
def test_killed_mid_write_the_next_run_recovers_to_the_same_tables(point, uninterrupted,
                                                                   tmp_path_factory):
    state = killed_then_rerun(point, tmp_path_factory)
    assert state["killed"], "the run ended before the kill point"
    assert state["left"], "the killed run's working database did not open"
    assert state["rerun"].returncode == 0, state["rerun"].stdout + state["rerun"].stderr

    work = state["data_dir"] / ".work" / "prices.db"
    opens_intact(work, state["data_dir"].parent / "scratch-after")
    recovered, expected = contents(work), contents(uninterrupted / ".work" / "prices.db")
    assert recovered.keys() == expected.keys()
    for table in expected:
        if table == "main.quarantine":   # see test_recovery_quarantines_no_duplicates below
            assert quarantined(recovered[table]) == quarantined(expected[table])
        else:
            assert recovered[table] == expected[table], table
    # nothing the killed run loaded is left pending
    with duckdb.connect(str(work), read_only=True) as con:
        assert con.execute("select count(*) from raw.crawls where passed and normalized_at is null"
                           ).fetchone()[0] == 0
    # and readers see the same observations and marts
    published = contents(state["data_dir"] / "prices.db")
    reference = contents(uninterrupted / "prices.db")
    assert {t: r for t, r in published.items() if t != "main.quarantine"} == \
           {t: r for t, r in reference.items() if t != "main.quarantine"}


def test_recovery_quarantines_no_duplicates(uninterrupted, tmp_path_factory):
    state = killed_then_rerun("history-insert-commit", tmp_path_factory)
    assert state["killed"] and state["rerun"].returncode == 0
    recovered = contents(state["data_dir"] / ".work" / "prices.db")["main.quarantine"]
    assert recovered == contents(uninterrupted / ".work" / "prices.db")["main.quarantine"]
    assert "dedupe" not in state["rerun"].stdout


def _next_hour_snapshots(root: Path) -> Path:
    """The two sources' snapshots, captured an hour later: a run over them adds rows."""
    for source in SOURCES:
        shutil.copytree(SNAPSHOT_DIR / source, root / source)
        manifest = root / source / "manifest.json"
        meta = json.loads(manifest.read_text(encoding="utf-8"))
        meta["captured_at"] = "2026-11-30T10:00:00Z"
        manifest.write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    return root


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _observations(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("select count(*) from observations").fetchone()[0]


def _publish_tmp(name: str) -> bool:
    return name.startswith(".prices.db.") and name.endswith(".tmp")


@pytest.fixture(scope="module")
def killed_while_publishing(uninterrupted, tmp_path_factory) -> dict:
    """An earlier clean run's data; then a run adding the next hour, killed the moment it starts
    writing the new copy of data/prices.db; then the same run again, to the end."""
    root = tmp_path_factory.mktemp("publish")
    data_dir = root / "data"
    shutil.copytree(uninterrupted, data_dir)
    published = data_dir / "prices.db"
    state: dict = {"old_digest": _digest(published), "old_rows": _observations(published)}
    snapshots = _next_hour_snapshots(root / "snapshots")
    state["killed"] = kill_at(data_dir, data_dir, [("create", _publish_tmp, 1)],
                              snapshots=snapshots)
    state["digest_after_kill"] = _digest(published)
    state["rows_after_kill"] = _observations(published)
    state["leftovers"] = sorted(p.name for p in data_dir.glob(".prices.db.*.tmp"))
    state["next_run"] = run_to_the_end(data_dir, snapshots)
    state["rows_after_next_run"] = _observations(published)
    state["left_after_next_run"] = [n for n in state["leftovers"] if (data_dir / n).exists()]
    state["published"] = published
    return state


def test_killed_while_publishing_readers_keep_a_whole_database(killed_while_publishing):
    state = killed_while_publishing
    assert state["killed"]
    if state["digest_after_kill"] == state["old_digest"]:
        assert state["rows_after_kill"] == state["old_rows"]          # the old file, untouched
    else:
        assert state["rows_after_kill"] == 2 * state["old_rows"]      # renamed already: the new one


def test_killed_while_publishing_the_next_run_publishes(killed_while_publishing):
    state = killed_while_publishing
    proc = state["next_run"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the next hour's rows, once each, in the newly published file
    assert state["rows_after_next_run"] == 2 * state["old_rows"]
    with duckdb.connect(str(state["published"]), read_only=True) as con:
        assert con.execute("pragma database_size").fetchall()
        for (table,) in con.execute("select table_schema || '.' || table_name from "
                                    "information_schema.tables").fetchall():
            con.execute(f"select count(*) from {table}").fetchone()


def test_a_later_run_clears_the_killed_runs_temporary_copy(killed_while_publishing):
    state = killed_while_publishing
    if not state["leftovers"]:
        pytest.skip("the kill came after the rename: nothing was left behind")
    assert state["left_after_next_run"] == []


def test_the_midway_kill_lands_between_two_models(tmp_path_factory):
    """The kill point is where its name says: the killed run had committed some models, not all
    (the recovery test above then proves the next run finishes the rest)."""
    from pipelines.defs.models import SQL_MODELS

    state = killed_then_rerun("sql-models-midway", tmp_path_factory)
    assert state["killed"]
    tables = {m.table for m in SQL_MODELS if m.materialized != "view"}
    built = tables & set(state["left"])
    assert 0 < len(built) < len(tables), sorted(built)
