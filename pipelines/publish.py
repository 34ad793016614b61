"""Publishing: every file a reader opens (feeds, the published database, the report) is written to
a temporary file beside its target and renamed into place, so a reader never sees half a file and
a reader holding the old file keeps reading it, undisturbed.

The published database is a whole copy of the working one (docs/scaling.md, "Publishing" says why
nothing cheaper keeps `duckdb data/prices.db` whole and unlocked): a reflink where the filesystem
shares blocks (btrfs, XFS, bcachefs: constant time), else a byte copy (ext4: O(file size))."""

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipelines.feed_cells import csv_safe_select

BOM = "\ufeff".encode()
FICLONE = 0x40049409   # linux/fs.h _IOW(0x94, 9, int): share the source's blocks, copy on write
# How DuckDB writes a feed's CSV: a header row, commas, timestamps as ISO 8601 UTC.
CSV_OPTIONS = "header, delimiter ',', timestampformat '%Y-%m-%dT%H:%M:%SZ'"


def temporary_beside(target: Path) -> Path:
    """A hidden temporary name next to `target` (same filesystem, so the rename is atomic)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    return target.with_name(f".{target.name}.{os.getpid()}.tmp")


@contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yields a temporary path to write; renames it over `target` when the block succeeds and
    removes it when the block fails."""
    tmp = temporary_beside(target)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomically(target: Path, text: str) -> Path:
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return target


def publish_feed(con, table: str, out_dir: Path, bom: bool = False) -> dict:
    """Write `table` as CSV (UTF-8, header, ISO 8601 UTC timestamps; a BOM for spreadsheet users
    on request; text cells made safe for spreadsheets, pipelines/feed_cells.py) and Parquet (the
    text as stored), each renamed into place. Returns {"rows", "csv", "parquet"}."""
    name = table.split(".")[-1]
    csv_path, parquet_path = out_dir / f"{name}.csv", out_dir / f"{name}.parquet"
    con.execute("set TimeZone = 'UTC'")  # timestamps as ISO 8601 UTC: 2026-11-30T09:00:00Z
    with atomic_path(csv_path) as tmp:
        con.execute(f"copy ({csv_safe_select(con, table)}) to '{tmp}' ({CSV_OPTIONS})")
        if bom:
            tmp.write_bytes(BOM + tmp.read_bytes())
    with atomic_path(parquet_path) as tmp:
        con.execute(f"copy (select * from {table}) to '{tmp}' (format parquet)")
    rows = con.execute(f"select count(*) from {table}").fetchone()[0]
    return {"rows": rows, "csv": csv_path, "parquet": parquet_path}


def clone_or_copy(source: Path, target: Path) -> str:
    """Write `target` as a new file with `source`'s bytes: a reflink (the two files share blocks
    until either is written, so later writes to `source` never reach `target`) where the
    filesystem allows it, else a byte copy. Returns "reflink" or "copy"."""
    with open(source, "rb") as src, open(target, "wb") as dst:
        try:
            fcntl.ioctl(dst.fileno(), FICLONE, src.fileno())
            return "reflink"
        except OSError:   # EOPNOTSUPP (ext4, tmpfs), EXDEV, EINVAL: no block sharing here
            pass
    shutil.copyfile(source, target)
    return "copy"


def reflink_supported(directory: Path) -> bool:
    """Whether files in `directory` can be published by reflink (a probe on two small files)."""
    probe = temporary_beside(directory / ".reflink-probe")
    clone = probe.with_name(probe.name + ".clone")
    try:
        probe.write_bytes(b"probe")
        return clone_or_copy(probe, clone) == "reflink"
    finally:
        probe.unlink(missing_ok=True)
        clone.unlink(missing_ok=True)


def publish_database(work: Path, target: Path) -> int:
    """Publish a copy of the working database `work` as `target` by rename. The caller has run
    `checkpoint` on it and closed its connection, so everything is in the main file and nothing
    in the WAL. Returns the published size.

    Any `<target>.wal` is removed right before and right
    after the rename: it can only be a writer's log of the file being replaced (a session killed
    while it had the old file open for writing, or one still open), and DuckDB would either refuse
    every later open of the new file ("WAL checkpoint iteration does not match") or, when the
    counters happen to agree, replay that session's writes into it. A reader holding the old file
    open keeps its inode and what it already read. The file stays writable: `duckdb
    data/prices.db` (without -readonly) must keep working for ad-hoc SQL; a session that writes to
    it loses its writes at the next publish (README, "Open it read-only")."""
    for stale in target.parent.glob(f".{target.name}.*.tmp"):   # left by a run killed mid-copy
        stale.unlink(missing_ok=True)
    wal = published_wal(target)
    with atomic_path(target) as tmp:
        clone_or_copy(work, tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        wal.unlink(missing_ok=True)
    # a writer of the old file may have logged between the unlink and the rename
    wal.unlink(missing_ok=True)
    return target.stat().st_size


def published_wal(target: Path) -> Path:
    """The write-ahead log DuckDB reads beside `target` when it opens it."""
    return target.with_name(f"{target.name}.wal")
