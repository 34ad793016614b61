"""Publishing: every file a reader opens (feeds, the published database, the report) is written to
a temporary file beside its target and renamed into place, so a reader never sees half a file and
a reader holding the old file keeps reading it, undisturbed.

The published database is one of two generations (pipelines/generations.py), the one readers do
not hold brought up to date with what changed, then linked as data/prices.db by rename; when that
cannot be done safely, a whole copy of the working one: a reflink where the filesystem shares
blocks (btrfs, XFS, bcachefs: constant time), else a byte copy (ext4: O(file size))."""

import fcntl
import json
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pipelines.feed_cells import csv_safe_select
from pipelines.generations import (
    NotInPlace,
    catalog_digest,
    forget_state,
    model_states,
    published_wal,
    stale_generation,
    sync_in_place,
    write_state,
)

BOM = "\ufeff".encode()
FICLONE = 0x40049409   # linux/fs.h _IOW(0x94, 9, int): share the source's blocks, copy on write
# How DuckDB writes a feed's CSV: a header row, commas, timestamps as ISO 8601 UTC.
CSV_OPTIONS = "header, delimiter ',', timestampformat '%Y-%m-%dT%H:%M:%SZ'"


def temporary_beside(target: Path) -> Path:
    """A hidden temporary name next to `target` (same filesystem, so the rename is atomic)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    return target.with_name(f".{target.name}.{os.getpid()}.tmp")


@contextmanager
def atomic_path(target: Path, sync: bool = True) -> Iterator[Path]:
    """Yields a temporary path to write; renames it over `target` when the block succeeds (and
    syncs the directory, unless `sync` is false: a scratch or staging directory whose files are
    renamed on, where the directory they end in is synced) and removes it when the block fails."""
    tmp = temporary_beside(target)
    try:
        yield tmp
        os.replace(tmp, target)
        if sync:
            sync_directory(target.parent)
    finally:
        tmp.unlink(missing_ok=True)


def staging_dir(target_dir: Path) -> Path:
    """Where the files bound for `target_dir` wait until they are published together with the
    database (a hidden sibling: the same filesystem, so each move is a rename)."""
    return target_dir.with_name(f".{target_dir.name}.next")


def refuse_unless_writable_dir(directory: Path) -> None:
    """Make `directory` if missing; raise NotADirectoryError / PermissionError naming it when it
    is a file or cannot be written, before anything is moved into it."""
    if directory.exists() and not directory.is_dir():
        raise NotADirectoryError(f"{directory} is a file, not a directory: move it away")
    directory.mkdir(parents=True, exist_ok=True)
    if not os.access(directory, os.W_OK | os.X_OK):
        raise PermissionError(f"{directory} is not writable")


def move_staged(staged: Path, target_dir: Path) -> list[Path]:
    """Rename every file of `staged` into `target_dir` (each atomic), then remove `staged`;
    returns the files moved. A staged folder holds some days of a dated feed (feed_days.py) and
    is moved file by file into the folder of its name (move_days); a hidden file (a record of
    what the others hold) moves after all the others. Nothing staged: nothing moved."""
    if not staged.is_dir():
        return []
    refuse_unless_writable_dir(target_dir)
    moved = []
    for path in sorted(staged.iterdir(), key=lambda p: (p.name.startswith("."), p.name)):
        if path.is_dir():
            moved.extend(move_days(path, target_dir / path.name))
            for single in (target_dir / f"{path.name}.csv", target_dir / f"{path.name}.parquet"):
                single.unlink(missing_ok=True)   # the feed as one file, before it was dated
        else:
            os.replace(path, target_dir / path.name)
            moved.append(target_dir / path.name)
            if path.suffix in (".csv", ".parquet") and (target_dir / path.stem).is_dir():
                shutil.rmtree(target_dir / path.stem)   # a feed that was dated is one file again
    sync_directory(target_dir)
    shutil.rmtree(staged, ignore_errors=True)
    return moved


# In a staged folder of days: the first day it replaces (empty: every day), so the days from
# there on that it does not hold (no rows any more) are removed from the published folder; or
# the days it removes, one a line (pipelines/feed_days.py).
REPLACES = ".replaces"
REMOVES = ".removes"


def move_days(staged: Path, target: Path) -> list[Path]:
    """Rename the day files of `staged` into `target` (a day's file is named by its ISO date),
    then remove target's files of the days `staged` replaces but does not hold, or removes."""
    replaces = staged / REPLACES
    first = replaces.read_text(encoding="utf-8").strip() if replaces.exists() else None
    removes = staged / REMOVES
    gone = set(removes.read_text(encoding="utf-8").split()) if removes.exists() else set()
    refuse_unless_writable_dir(target)
    moved = []
    for path in sorted(staged.iterdir()):
        if path.name not in (REPLACES, REMOVES):
            os.replace(path, target / path.name)
            moved.append(target / path.name)
    kept = {path.name for path in moved}
    for path in target.iterdir():
        if path.name in kept or path.name.startswith("."):
            continue
        if (first is not None and path.stem >= first) or path.stem in gone:
            path.unlink(missing_ok=True)
    sync_directory(target)
    return moved


def sync_directory(directory: Path) -> None:
    """fsync a directory, so a rename in it survives power loss or an OS crash (without it the
    old name can come back after a crash). A filesystem that cannot sync a directory is let be."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_text_atomically(target: Path, text: str, sync: bool = True) -> Path:
    with atomic_path(target, sync) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return target


def feed_copies(con, read: str) -> list[tuple[str, str, str]]:
    """A feed's two files as (suffix, select, COPY options) of `read`: the CSV (text cells made
    safe for spreadsheets, pipelines/feed_cells.py) and the Parquet (the text as stored). Sets the
    session's TimeZone to UTC: the CSV's timestamps are ISO 8601 UTC, 2026-11-30T09:00:00Z."""
    con.execute("set TimeZone = 'UTC'")
    return [("csv", csv_safe_select(con, read), CSV_OPTIONS),
            ("parquet", f"select * from {read}", "format parquet")]


def write_feed_schema(con, read: str, table: str, out_dir: Path, csv_name: str,
                      **extra: str) -> Path:
    """out_dir/<mart>.schema.json: the typed companion (csv_schema) of the CSV named `csv_name`
    (a file, or a pattern of a dated feed's days), read from `read`, plus `extra` fields."""
    schema = {**csv_schema(con, read, csv_name), "table": table, **extra}
    return write_text_atomically(
        out_dir / f"{table.split('.')[-1]}.schema.json",
        json.dumps(schema, ensure_ascii=False, indent=1) + "\n", sync=False)


def publish_feed(con, table: str, out_dir: Path, bom: bool = False,
                 source: str | None = None) -> dict:
    """Write `table` (read from `source` when given: a view of it with more columns) as CSV
    (UTF-8, header, ISO 8601 UTC timestamps; a BOM for spreadsheet users on request; text cells
    made safe for spreadsheets, pipelines/feed_cells.py) and Parquet (the text as stored), each
    renamed into place, and the CSV's typed companion <mart>.schema.json (csv_schema). Returns
    {"rows", "csv", "parquet", "schema"}. `out_dir` is a staging or scratch directory (its
    directory is not synced per file: the caller renames the files on and syncs where they end,
    move_staged; a sync per file was a sixth of the feeds step)."""
    name = table.split(".")[-1]
    read = source or table
    paths = {}
    for suffix, select, options in feed_copies(con, read):
        paths[suffix] = out_dir / f"{name}.{suffix}"
        with atomic_path(paths[suffix], sync=False) as tmp:
            con.execute(f"copy ({select}) to '{tmp}' ({options})")
            if suffix == "csv" and bom:
                tmp.write_bytes(BOM + tmp.read_bytes())
    rows = con.execute(f"select count(*) from {read}").fetchone()[0]
    schema_path = write_feed_schema(con, read, table, out_dir, paths["csv"].name)
    return {"rows": rows, "csv": paths["csv"], "parquet": paths["parquet"], "schema": schema_path}


# DuckDB type -> (Frictionless Table Schema type, pandas dtype) for the CSV companion. A pandas
# dtype is the one pd.read_parquet(..., dtype_backend="numpy_nullable") gives the same column,
# except where CSV text cannot carry it: DECIMAL reads as Float64 (Parquet: exact Decimal
# objects), DATE as datetime64 (Parquet: date objects), a list as its text.
INTEGER_DTYPES = {"TINYINT": "Int8", "SMALLINT": "Int16", "INTEGER": "Int32", "BIGINT": "Int64",
                  "UTINYINT": "UInt8", "USMALLINT": "UInt16", "UINTEGER": "UInt32",
                  "UBIGINT": "UInt64"}
DATE_TYPES = {"DATE": "date", "TIMESTAMP WITH TIME ZONE": "datetime", "TIMESTAMP": "datetime"}


def csv_field(name: str, duckdb_type: str) -> dict:
    """One column of the CSV companion: its Frictionless `type`, DuckDB type and pandas dtype."""
    field = {"name": name, "duckdb_type": duckdb_type}
    if duckdb_type in INTEGER_DTYPES:
        field |= {"type": "integer", "pandas_dtype": INTEGER_DTYPES[duckdb_type]}
    elif duckdb_type in ("DOUBLE", "FLOAT", "HUGEINT", "UHUGEINT") or \
            duckdb_type.startswith("DECIMAL"):
        field |= {"type": "number", "pandas_dtype": "Float64"}
    elif duckdb_type == "BOOLEAN":
        field |= {"type": "boolean", "pandas_dtype": "boolean",
                  "trueValues": ["true"], "falseValues": ["false"]}
    elif duckdb_type in DATE_TYPES:
        utc = duckdb_type == "TIMESTAMP WITH TIME ZONE"
        field |= {"type": DATE_TYPES[duckdb_type],
                  "pandas_dtype": "datetime64[ns, UTC]" if utc else "datetime64[ns]"}
        if utc:
            field["format"] = "%Y-%m-%dT%H:%M:%SZ"
    else:   # text, and anything else DuckDB writes as text (lists, structs)
        field |= {"type": "string", "pandas_dtype": "string"}
    return field


def csv_schema(con, table: str, csv_name: str) -> dict:
    """The typed companion of a CSV feed (data/feeds/<mart>.schema.json): Frictionless Table
    Schema `fields` plus `pandas_read_csv`, the keyword arguments that read the CSV with these
    types: pd.read_csv(csv, **schema["pandas_read_csv"]). Only an empty cell is missing (a
    vendor's "NA" or "None" stays text)."""
    fields = [csv_field(name, column_type)
              for name, column_type, *_ in con.execute(f"describe {table}").fetchall()]
    dated = [f["name"] for f in fields if f["type"] in ("date", "datetime")]
    return {"table": table, "path": csv_name, "encoding": "utf-8", "missingValues": [""],
            "fields": fields,
            "pandas_read_csv": {
                "dtype": {f["name"]: f["pandas_dtype"] for f in fields if f["name"] not in dated},
                "parse_dates": dated, "keep_default_na": False, "na_values": [""],
                "encoding": "utf-8-sig"}}   # utf-8-sig: with or without the spreadsheet BOM


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


def publish_database(work: Path, target: Path,
                     before_rename: Callable[[], object] | None = None) -> int:
    """Publish the working database `work` as `target`; returns the published size
    (publish_generation does it and says how)."""
    return publish_generation(work, target, before_rename)["bytes"]


def publish_generation(work: Path, target: Path,
                       before_rename: Callable[[], object] | None = None) -> dict:
    """Publish the working database `work` as `target` (data/prices.db): bring the generation
    readers do not hold up to date (pipelines/generations.py: what changed, in place; else a whole
    copy in a new file renamed over its name), then rename a new hard link of it over `target`.
    The caller has run `checkpoint` on `work` and closed its connection, so everything is in the
    main file and nothing in the WAL. Returns {"bytes", "method" ("generations": in place, or
    "copy"), "why" (what made it copy), "tables" (how each table was brought up to date)}.

    `before_rename` runs once the generation is whole and fsynced, right before the switch (the
    run moves its staged feeds there): the write that can run out of space is done, so a failure
    of it leaves the old database and the old feeds together; a failure of `before_rename`, or of
    anything before it, leaves `target` what it was (the generation written is not the one it
    links).

    Any `<target>.wal` is removed right before and right after the switch: it can only be a
    writer's log of the file being replaced (a session killed while it had the old file open for
    writing, or one still open), and DuckDB would either refuse every later open of the new file
    ("WAL checkpoint iteration does not match") or, when the counters happen to agree, replay that
    session's writes into it. A reader holding the old file open keeps its inode and what it
    already read. The file stays writable: `duckdb data/prices.db` (without -readonly) must keep
    working for ad-hoc SQL; a session that writes to it loses its writes at the next publish
    (README, "Open it read-only"), and its generation is copied whole the next time it is due.

    Before the copy, every table and column of the working database gets its comment
    (pipelines/warehouse/comments.py; no write when they are up to date); the generation then
    holds every table but the internal bookkeeping ones (INTERNAL_TABLES), which the working
    database keeps."""
    generation = stale_generation(target)
    for path in (target, generation):
        remove_stale_temporaries(path)
    describe_tables(work)
    try:
        tables, method, why = sync_in_place(work, generation), "generations", None
    except NotInPlace as exc:
        tables, method, why = {}, "copy", str(exc)
    except Exception as exc:   # any failure mid-sync: the whole copy is the answer
        tables, method, why = {}, "copy", f"{type(exc).__name__}: {exc}"
    if method == "copy":
        copy_generation(work, generation)
    switch_link(generation, target, before_rename)
    return {"bytes": target.stat().st_size, "method": method, "why": why, "tables": tables}


def remove_stale_temporaries(target: Path) -> None:
    """What a run killed mid-copy left beside `target`."""
    for pattern in (f".{target.name}.*.tmp", f".{target.name}.*.tmp.wal"):
        for stale in target.parent.glob(pattern):
            stale.unlink(missing_ok=True)


def copy_generation(work: Path, generation: Path) -> None:
    """Write `generation` as a new file, a whole copy of `work` without the internal tables,
    renamed over its name (a reader holding the old file keeps it), and record what it holds."""
    forget_state(generation)
    wal = published_wal(generation)
    with atomic_path(generation) as tmp:
        clone_or_copy(work, tmp)
        try:
            models, catalog = drop_internal_tables(tmp)
        finally:
            published_wal(tmp).unlink(missing_ok=True)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        wal.unlink(missing_ok=True)
    wal.unlink(missing_ok=True)
    write_state(generation, models, catalog)


def switch_link(generation: Path, target: Path,
                before_rename: Callable[[], object] | None) -> None:
    """Rename a new hard link of `generation` over `target` (a copy where the filesystem has no
    hard links), `before_rename` run right before."""
    wal = published_wal(target)
    with atomic_path(target) as tmp:
        try:
            os.link(generation, tmp)
        except OSError:      # EPERM, EXDEV, EOPNOTSUPP: no hard links here
            clone_or_copy(generation, tmp)
        if before_rename is not None:
            before_rename()
        wal.unlink(missing_ok=True)
    # a writer of the old file may have logged between the unlink and the rename
    wal.unlink(missing_ok=True)


def describe_tables(work: Path) -> int:
    """COMMENT ON every table and column of the (closed) working database `work` whose comment
    is missing or stale; returns how many were written."""
    import duckdb

    from pipelines.warehouse.comments import apply_comments

    with duckdb.connect(str(work)) as con:
        written = apply_comments(con)
        if written:
            con.execute("checkpoint")
    return written


def drop_internal_tables(copy: Path) -> tuple[dict[str, list], str]:
    """Removes the internal bookkeeping tables from `copy` (the file about to be published), then
    checkpoints so the file is whole without its WAL; returns the builds raw.model_state recorded
    and the digest of the catalog it publishes (pipelines/generations.py keeps both beside the
    generation). A copy without any internal table is left byte for byte as it was."""
    import duckdb

    from pipelines.warehouse.comments import INTERNAL_TABLES

    with duckdb.connect(str(copy)) as con:
        con.execute("set TimeZone = 'UTC'")
        catalog = con.execute("select current_database()").fetchone()[0]
        models = model_states(con, catalog)
        present = {f"{s}.{t}" for s, t in con.execute(
            "select schema_name, table_name from duckdb_tables()").fetchall()}
        dropped = [t for t in INTERNAL_TABLES if t in present]
        for table in dropped:
            con.execute(f"drop table {table}")
        if dropped:
            con.execute("checkpoint")
        return models, catalog_digest(con, catalog)
