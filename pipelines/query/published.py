"""Opening the published database: `data/prices.db`, read-only, never the pipeline's working copy,
so that a reader never blocks a run."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from pipelines.query.errors import NoDataError, UnreadableDatabaseError


def database_path(data_dir: str | Path | None = None) -> Path:
    """The published database: `<data_dir>/prices.db` (default: data/, or $GPUPRICES_DATA_DIR)."""
    from spiders.layout import data_dir as default_data_dir
    from spiders.layout import db_path

    return db_path(default_data_dir(data_dir))


@contextmanager
def open_published(tables: Sequence[str] = (), data_dir: str | Path | None = None) -> Iterator:
    """A read-only connection to the published database (database_path), in UTC. No file, or one
    without `tables` ("schema.table") yet: NoDataError; a file DuckDB refuses:
    UnreadableDatabaseError with the cause and what to do (cannot_open)."""
    import duckdb

    path = database_path(data_dir)
    if not path.exists():
        raise NoDataError(f"no published database at {path} yet: run `make run` first "
                          "(or `gpuprices run`)")
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        raise UnreadableDatabaseError(cannot_open(path, str(exc))) from None
    try:
        con.execute("set TimeZone = 'UTC'")
        present = {f"{s}.{t}" for s, t in con.execute(
            "select table_schema, table_name from information_schema.tables").fetchall()}
        missing = [t for t in tables if t not in present]
        if missing:
            raise NoDataError(f"{path} has no {', '.join(missing)} yet: run `make run` first "
                              "(or `gpuprices run`)")
        yield con
    finally:
        con.close()


def cannot_open(path: Path, message: str) -> str:
    """Why the published database did not open, and what to do, from DuckDB's message: a session
    holding it for writing, a stale or damaged WAL beside it, or a file that is not DuckDB's."""
    first = message.strip().splitlines()[0] if message.strip() else "no reason given"
    wal = path.with_name(f"{path.name}.wal")
    if "Could not set lock" in message:
        holder = re.search(r"held in (.+?) \(PID (\d+)\)", message)
        who = f"{holder[1]} (PID {holder[2]})" if holder else "another process"
        return (f"cannot open {path}: {who} has it open for writing (a `duckdb` session started "
                "without -readonly?), and DuckDB then refuses every other process (\"Could not "
                "set lock\"). Close that session and open the database with `duckdb -readonly` "
                "(`make sql` does), then retry")
    if "WAL" in message:
        return (f"cannot open {path}: the write-ahead log {wal} beside it does not belong to it "
                f"({first}). A session that opened the database for writing and did not close "
                "cleanly left it, and a newer copy was published since. The log holds only that "
                f"session's own changes: remove {wal} (the next successful `gpuprices run` "
                "removes it when it publishes), then retry; open the database with `duckdb "
                "-readonly` (`make sql` does) so it cannot happen again")
    if "not a valid DuckDB database" in message:
        return (f"cannot open {path}: it is not a DuckDB database ({first}). `gpuprices run` "
                "publishes it anew")
    return (f"cannot open {path}: {first}. If the file is damaged, `gpuprices run` publishes it "
            "anew")
