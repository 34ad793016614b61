"""Publishing: every file a reader opens (feeds, the published database, the report) is written to
a temporary file beside its target and renamed into place, so a reader never sees half a file and
a reader holding the old file keeps reading it, undisturbed."""

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BOM = "\ufeff".encode()
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
    on request) and Parquet, each renamed into place. Returns {"rows", "csv", "parquet"}."""
    name = table.split(".")[-1]
    csv_path, parquet_path = out_dir / f"{name}.csv", out_dir / f"{name}.parquet"
    con.execute("set TimeZone = 'UTC'")  # timestamps as ISO 8601 UTC: 2026-11-30T09:00:00Z
    with atomic_path(csv_path) as tmp:
        con.execute(f"copy (select * from {table}) to '{tmp}' ({CSV_OPTIONS})")
        if bom:
            tmp.write_bytes(BOM + tmp.read_bytes())
    with atomic_path(parquet_path) as tmp:
        con.execute(f"copy (select * from {table}) to '{tmp}' (format parquet)")
    rows = con.execute(f"select count(*) from {table}").fetchone()[0]
    return {"rows": rows, "csv": csv_path, "parquet": parquet_path}


def publish_database(work: Path, target: Path) -> int:
    """Publish a copy of the working database `work` as `target` by rename. The caller has run
    `checkpoint` on it and closed its connection, so everything is in the main file and nothing
    in the WAL. Returns the published size."""
    for stale in target.parent.glob(f".{target.name}.*.tmp"):   # left by a run killed mid-copy
        stale.unlink(missing_ok=True)
    with atomic_path(target) as tmp:
        shutil.copyfile(work, tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
    return target.stat().st_size
