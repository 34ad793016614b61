"""Before a run crawls anything: can it write where it has to? The data directory must exist (or
be creatable) and take a file, the working database must open for writing (DuckDB allows one
writer process: another one holding it makes the open fail at once), and the filesystem must have
room for what a run writes. Each failure is a `DiskRefused` carrying one plain paragraph naming
the path and the cause, so `gpuprices run` and the Dagster crawl step fail in a second instead of
crawling every source first and failing (or being retried) on the database afterwards.

Free space: a run writes the raw archive, the WAL, the feeds, and `data/prices.db` as a whole
copy of the working database (a byte copy on ext4); a run that starts with less room than that
fails at its last step. The floor is the working database's size plus `HEADROOM_BYTES`;
GPUPRICES_MIN_FREE_MB sets it instead (0 turns the check off)."""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from spiders.layout import data_dir, work_db_path

MIB = 1 << 20
HEADROOM_BYTES = 200 * MIB   # the raw archive, the WAL, feeds and report of one run, with margin
MIN_FREE_ENV = "GPUPRICES_MIN_FREE_MB"
# DuckDB's message when another process holds the file: '... Conflicting lock is held in
# /usr/bin/python3.11 (PID 4242) by user ann. See also ...'
LOCK_HOLDER = re.compile(r"Conflicting lock is held in (?P<program>.+?) \(PID (?P<pid>\d+)\)")
# DuckDB's message when this process already has the file open under another configuration (a
# Dagster step's connection adds its user agent, and a failed step's connection may linger).
SAME_PROCESS = "with a different configuration than existing connections"
NOTHING_DONE = "Nothing was crawled and nothing was changed."


class DiskRefused(Exception):
    """The run cannot write where it must; the message is one paragraph meant for people."""


def check_ready_to_write(directory: Path | None = None, work_db: Path | None = None, *,
                         open_database: bool = True,
                         free_bytes: Callable[[Path], int] | None = None) -> None:
    """Raise DiskRefused when a run could not write its data: the directory, free space, the
    working database (skipped with open_database=False, for a step that runs beside the run's own
    writers). `free_bytes` is a seam for tests (default: what the filesystem says)."""
    directory = directory or data_dir()
    work_db = work_db or work_db_path()
    for folder in (directory, work_db.parent):
        check_writable(folder)
    check_free_space(directory, work_db, free_bytes or _free_bytes)
    if open_database:
        check_database_opens(work_db)


def check_writable(folder: Path) -> None:
    """`folder` exists or can be made, and a file can be written in it (a real write: root passes
    any permission check, a read-only mount or a full disk do not)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DiskRefused(f"cannot start the run: the directory {folder} does not exist and "
                          f"cannot be created ({_reason(exc)}). Create it, or point "
                          f"GPUPRICES_DATA_DIR at a writable directory. {NOTHING_DONE}") from None
    probe = folder / f".preflight.{os.getpid()}.tmp"
    try:
        with open(probe, "wb") as fh:
            fh.write(b"probe")
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        raise DiskRefused(f"cannot start the run: cannot write in {folder} ({_reason(exc)}). "
                          "Make it writable for this user (or remount it read-write), or point "
                          f"GPUPRICES_DATA_DIR at a writable directory. {NOTHING_DONE}") from None
    finally:
        with contextlib.suppress(OSError):   # a read-only filesystem refuses the unlink too
            probe.unlink(missing_ok=True)


def check_database_opens(work_db: Path) -> None:
    """The working database opens for writing: no other process holds it, and it is a DuckDB
    file that opens (its WAL replayed, as the run's first write would)."""
    import duckdb

    from pipelines.warehouse.db import DUCKDB_CONFIG

    try:
        duckdb.connect(str(work_db), config=DUCKDB_CONFIG).close()
    except duckdb.Error as exc:
        if SAME_PROCESS in str(exc):   # this process has it open already, so it holds the lock
            return
        raise DiskRefused(describe_open_failure(work_db, str(exc))) from None


def describe_open_failure(work_db: Path, message: str) -> str:
    """One paragraph for a working database that would not open, naming the lock's holder when
    DuckDB names it."""
    first = message.strip().splitlines()[0] if message.strip() else "no reason given"
    if "Could not set lock" in message:
        holder = LOCK_HOLDER.search(message)
        who = (f"process {holder['pid']} ({_command_line(holder['pid']) or holder['program']})"
               if holder else "another process")
        return (f"cannot start the run: the working database {work_db} is locked by {who}. "
                "DuckDB lets one process write a file and any open connection locks it: another "
                "`gpuprices run`, a Dagster run (`make ui`), or a `duckdb` session opened on it. "
                f"Let it finish or close it, then run again. {NOTHING_DONE}")
    if "not a valid DuckDB database" in message:
        return (f"cannot start the run: {work_db} is not a DuckDB database ({first}). Move it "
                f"aside; the next run starts a new one. {NOTHING_DONE}")
    return (f"cannot start the run: the working database {work_db} does not open for writing "
            f"({first}). {NOTHING_DONE}")


def required_free_bytes(work_db: Path) -> int:
    """The floor: GPUPRICES_MIN_FREE_MB (MiB) when set, else the working database's size (the
    published copy) plus HEADROOM_BYTES."""
    override = os.environ.get(MIN_FREE_ENV, "").strip()
    if override:
        try:
            megabytes = float(override)
        except ValueError:
            megabytes = -1.0
        if not (math.isfinite(megabytes) and megabytes >= 0):
            raise DiskRefused(f"{MIN_FREE_ENV}={override!r} is not a number of MB (0 turns the "
                              f"free-space check off). {NOTHING_DONE}")
        return int(megabytes * MIB)
    size = sum(p.stat().st_size for p in (work_db, Path(f"{work_db}.wal")) if p.exists())
    return size + HEADROOM_BYTES


def check_free_space(directory: Path, work_db: Path,
                     free_bytes: Callable[[Path], int]) -> None:
    need = required_free_bytes(work_db)
    for folder in dict.fromkeys((directory, work_db.parent)):   # once when they are one
        free = free_bytes(folder)
        if free < need:
            raise DiskRefused(
                f"cannot start the run: {_mb(free)} free on the filesystem of {folder}; a run "
                f"needs at least {_mb(need)} (the working database's size, for the copy "
                f"published as data/prices.db, plus {_mb(HEADROOM_BYTES)} for the raw archive, "
                f"the WAL and the feeds; {MIN_FREE_ENV} sets another floor, 0 turns it off). "
                f"Free some space, then run again. {NOTHING_DONE}")


def _free_bytes(folder: Path) -> int:
    return shutil.disk_usage(folder).free


def _mb(size: int) -> str:
    return f"{size / MIB:,.1f} MB"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _command_line(pid: str) -> str:
    """The holder's command line (Linux /proc), so the message says `gpuprices run` or `duckdb`
    rather than only the interpreter; empty when unknown."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    words = raw.decode(errors="replace").replace("\0", " ").split()   # an argument may hold lines
    return " ".join(words)[:200]
