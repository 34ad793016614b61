"""What the crash loop (`tests/workshop/crash_loop.py`) watches and checks: file events in the
data directory as they happen (Linux inotify, through ctypes), and, after a killed run and its
rerun, whether the databases equal those of a run that was never interrupted.

Each check returns a list of problems (empty: it holds), so a kill point's verdict is readable and
the checks can be tried on handcrafted databases (tests/faults/test_crash_loop.py)."""

from __future__ import annotations

import ctypes
import os
import select
import struct
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from pipelines.warehouse.sql_files import sql_text
from spiders.layout import db_path, work_db_path

IN_MODIFY, IN_CREATE, IN_MOVED_FROM = 0x2, 0x100, 0x40
# Columns that differ between any two runs of the same hour: which crawl and run, and when.
BOOKKEEPING = {"crawl_id", "run_id", "quarantined_at", "normalized_at", "computed_at",
               "built_at", "loaded_at"}
QUARANTINE = "main.quarantine"


def is_publish_tmp(name: str) -> bool:
    """The temporary copy `publish_database` writes and renames to `data/prices.db`."""
    return name.startswith(".prices.db.") and name.endswith(".tmp")


@dataclass
class Event:
    seconds: float       # since the run started
    where: str           # "data" | "work"
    kind: str            # "create" | "modify" | "moved"
    name: str


@dataclass
class Trigger:
    """Kill once each step happened in turn: (where, kind, file name, how many times); or, with
    no steps, `delay` seconds after the start. `then` adds a delay after the last step."""
    steps: list[tuple[str, str, str, int]] = field(default_factory=list)
    delay: float = 0.0
    then: float = 0.0

    def matches(self, step: tuple[str, str, str, int], event: Event) -> bool:
        where, kind, name, _ = step
        if (where, kind) != (event.where, event.kind):
            return False
        return is_publish_tmp(event.name) if name == "publish-tmp" else event.name == name


class FileEvents:
    """File creations, writes and renames in the data directory and `data/.work`."""

    def __init__(self, data_dir: Path) -> None:
        self._libc = ctypes.CDLL("libc.so.6", use_errno=True)
        self._fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self._dirs: dict[int, str] = {}
        for where, directory in (("data", data_dir), ("work", work_db_path(data_dir).parent)):
            directory.mkdir(parents=True, exist_ok=True)
            wd = self._libc.inotify_add_watch(self._fd, str(directory).encode(),
                                              IN_CREATE | IN_MODIFY | IN_MOVED_FROM)
            if wd < 0:
                raise OSError(ctypes.get_errno(), f"inotify_add_watch {directory}")
            self._dirs[wd] = where

    def read(self, timeout: float, started: float) -> list[Event]:
        """The events that arrive within `timeout` seconds (none: an empty list)."""
        ready, _, _ = select.select([self._fd], [], [], max(timeout, 0.0))
        if not ready:
            return []
        now = time.monotonic() - started
        buffer, offset, events = os.read(self._fd, 1 << 16), 0, []
        while offset < len(buffer):
            wd, mask, _, length = struct.unpack_from("iIII", buffer, offset)
            name = buffer[offset + 16:offset + 16 + length].rstrip(b"\0").decode()
            offset += 16 + length
            kind = ("create" if mask & IN_CREATE else "moved" if mask & IN_MOVED_FROM
                    else "modify" if mask & IN_MODIFY else "")
            if kind and wd in self._dirs:
                events.append(Event(now, self._dirs[wd], kind, name))
        return events

    def close(self) -> None:
        os.close(self._fd)


def phase(events: list[Event]) -> str:
    """Where a run was when it was killed, from the file events it made until then."""
    wal_writes = sum(1 for e in events if e.where == "work" and e.kind == "create"
                     and e.name == "prices.db.wal")
    if any(e.kind == "moved" and is_publish_tmp(e.name) for e in events):
        return "publish, after the rename"
    if any(e.kind == "create" and is_publish_tmp(e.name) for e in events):
        return "publish, before the rename"
    return f"DuckDB write {wal_writes}" if wal_writes else "crawl (nothing written yet)"


Tables = dict[str, tuple[tuple[str, ...], list[tuple]]]   # table -> (columns, sorted rows)


def table_contents(db: Path) -> Tables:
    """Every compared table's columns and rows, bookkeeping columns left out, rows sorted."""
    with duckdb.connect(str(db), read_only=True) as con:
        columns: dict[str, list[str]] = {}
        for schema, table, column in con.execute(sql_text(__file__, "crash_loop_user_columns")
                                                 ).fetchall():
            kept = columns.setdefault(f"{schema}.{table}", [])
            if column not in BOOKKEEPING:
                kept.append(column)
        tables: Tables = {}
        for table, names in columns.items():
            select = ", ".join(f'"{name}"' for name in names)
            rows = con.execute(f"select {select} from {table} order by all").fetchall()
            tables[table] = (tuple(names), rows)
        return tables


def _difference(got: list[tuple], expected: list[tuple]) -> str:
    missing = Counter(expected) - Counter(got)
    extra = Counter(got) - Counter(expected)
    return (f"{sum(missing.values())} rows missing, {sum(extra.values())} extra "
            f"({len(got)} against {len(expected)})")


def compare_tables(got: Tables, expected: Tables, label: str = "") -> list[str]:
    """Problems where `got` differs from the reference `expected`: a table missing or added,
    other rows. The quarantine must also hold no `dedupe` row (a re-crawled hour is not a
    duplicate) and no more rows than the reference."""
    problems = [f"{label}{t} missing" for t in sorted(expected.keys() - got.keys())]
    problems += [f"{label}{t} not in the reference" for t in sorted(got.keys() - expected.keys())]
    for table in sorted(expected.keys() & got.keys()):
        (columns, rows), (_, reference) = got[table], expected[table]
        if table == QUARANTINE and "stage" in columns:
            stage = columns.index("stage")
            dedupe = sum(1 for row in rows if row[stage] == "dedupe")
            if dedupe:
                problems.append(f"{label}{table}: {dedupe} dedupe rows")
            if len(rows) > len(reference):
                problems.append(f"{label}{table}: {len(rows)} rows, more than the "
                                f"reference's {len(reference)}")
        if got[table] != expected[table]:
            problems.append(f"{label}{table}: {_difference(rows, reference)}")
    return problems


def crawl_problems(db: Path) -> list[str]:
    """A crawl left pending, or marked normalized with 0 rows or while its hour has none."""
    with duckdb.connect(str(db), read_only=True) as con:
        cursor = con.execute(sql_text(__file__, "overlap_crawls"))
        names = [d[0] for d in cursor.description]
        state = dict(zip(names, cursor.fetchone(), strict=True))
    labels = {"pending": "crawls left pending",
              "normalized_with_0_rows": "crawls marked normalized with 0 rows",
              "normalized_hour_without_rows": "crawls marked normalized, their hour without rows"}
    return [f"{state[name]} {label}" for name, label in labels.items() if state[name]]


def published_state(published: Path, old_rows: int, new_rows: int) -> tuple[str, list[str]]:
    """What a reader finds at `data/prices.db` right after the kill: ("old" | "new", []) when it
    is a whole database with either run's observations, else a description and the problem."""
    if not published.exists():
        return "absent", ["data/prices.db absent after the kill"]
    try:
        with duckdb.connect(str(published), read_only=True) as con:
            rows = con.execute("select count(*) from observations").fetchone()[0]
    except duckdb.Error as error:
        return "broken", [f"data/prices.db did not open after the kill: {error}"]
    if rows == old_rows:
        return "old", []
    if rows == new_rows:
        return "new", []
    return f"{rows} rows", [f"data/prices.db after the kill has {rows} observations, neither "
                            f"the old {old_rows} nor the new {new_rows}"]


def published_problems(data_dir: Path) -> list[str]:
    """The published database opens read-only with every table queryable, and no temporary
    copy of a killed publish is left beside it."""
    problems = [f"stale {p.name} left" for p in data_dir.glob(".prices.db.*.tmp")]
    try:
        with duckdb.connect(str(db_path(data_dir)), read_only=True) as con:
            tables = [t for (t,) in con.execute(sql_text(__file__, "crash_loop_all_tables")
                                                ).fetchall()]
            for table in tables:
                con.execute(f"select count(*) from {table}").fetchone()
    except duckdb.Error as error:
        problems.append(f"data/prices.db does not open read-only: {error}")
    return problems
