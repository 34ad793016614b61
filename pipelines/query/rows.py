"""A query's rows as dicts: how every reader of the database (the commands, the report, the
alert rules) takes its rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def columns_and_records(con, sql: str, params: Sequence | Mapping | None = ()
                        ) -> tuple[list[str], list[dict[str, Any]]]:
    """The query's column names and its rows as dicts, column name to value (the names also
    when there are no rows). `params`: positional values, or a mapping for `$name` ones."""
    cursor = con.execute(sql, params if isinstance(params, Mapping) else list(params or ()))
    names = [d[0] for d in cursor.description]
    return names, [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def records(con, sql: str, params: Sequence | Mapping | None = ()) -> list[dict[str, Any]]:
    """The rows of a query as dicts, column name to value."""
    return columns_and_records(con, sql, params)[1]
