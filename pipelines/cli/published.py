"""Reading the published database: `data/prices.db`, opened read-only, never the pipeline's
working copy, so that a reader never blocks a run."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import click

from pipelines.cli.exit_codes import NoData


@contextmanager
def published_db(*tables: str) -> Iterator:
    """A read-only connection to the published `data/prices.db` (never the working database, so
    a reader never blocks a run). No database, or one without `tables` yet: exit 3."""
    import duckdb

    from spiders.layout import db_path

    path = db_path()
    if not path.exists():
        raise NoData(f"no published database at {path} yet: run `make run` first "
                     "(or `gpuprices run`)")
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.IOException as exc:  # a session holds it for writing (`duckdb` without -readonly)
        raise click.ClickException(
            f"cannot open {path}: {str(exc).splitlines()[0]}. Close that session, or open the "
            "database with `duckdb -readonly` (`make sql` does), then retry") from None
    try:
        con.execute("set TimeZone = 'UTC'")
        present = {f"{s}.{t}" for s, t in con.execute(
            "select table_schema, table_name from information_schema.tables").fetchall()}
        missing = [t for t in tables if t not in present]
        if missing:
            raise NoData(f"{path} has no {', '.join(missing)} yet: run `make run` first "
                         "(or `gpuprices run`)")
        yield con
    finally:
        con.close()


def records(con, sql: str, params: Sequence | dict = ()) -> list[dict]:
    """The rows of a query as dicts, column name to value."""
    cursor = con.execute(sql, params if isinstance(params, dict) else list(params))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
