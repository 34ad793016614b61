"""Reading the published database: `data/prices.db`, opened read-only, never the pipeline's
working copy, so that a reader never blocks a run."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import click

from pipelines.cli.exit_codes import NoData


@contextmanager
def published_db(*tables: str) -> Iterator:
    """A read-only connection to the published `data/prices.db` (never the working database, so
    a reader never blocks a run). No database, or one without `tables` yet: exit 3."""
    from spiders.layout import db_path

    with open_published(db_path(), tables, NoData, click.ClickException) as con:
        yield con


@contextmanager
def open_published(path: Path, tables: Sequence[str], no_data: type[Exception],
                   unreadable: type[Exception]) -> Iterator:
    """A read-only connection to the published database at `path`, in UTC. No file, or one
    without `tables` ("schema.table") yet: `no_data`; a file DuckDB refuses: `unreadable` with
    the cause and what to do (cannot_open). The CLI raises its exit-code errors, the Python API
    its own exceptions."""
    import duckdb

    if not path.exists():
        raise no_data(f"no published database at {path} yet: run `make run` first "
                      "(or `gpuprices run`)")
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        raise unreadable(cannot_open(path, str(exc))) from None
    try:
        con.execute("set TimeZone = 'UTC'")
        present = {f"{s}.{t}" for s, t in con.execute(
            "select table_schema, table_name from information_schema.tables").fetchall()}
        missing = [t for t in tables if t not in present]
        if missing:
            raise no_data(f"{path} has no {', '.join(missing)} yet: run `make run` first "
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


def records(con, sql: str, params: Sequence | dict = ()) -> list[dict]:
    """The rows of a query as dicts, column name to value."""
    cursor = con.execute(sql, params if isinstance(params, dict) else list(params))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
