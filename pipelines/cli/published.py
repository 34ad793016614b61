"""Reading the published database from a command: pipelines.query.published's opener, its
errors turned into the CLI's (exit 3 for no data, exit 1 for a file DuckDB refuses)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from pipelines.cli.exit_codes import NoData
from pipelines.query.errors import NoDataError, UnreadableDatabaseError
from pipelines.query.published import open_published


@contextmanager
def published_db(*tables: str) -> Iterator:
    """A read-only connection to the published `data/prices.db` (never the working database, so
    a reader never blocks a run). No database, or one without `tables` yet: exit 3."""
    try:
        with open_published(tables) as con:
            yield con
    except NoDataError as exc:
        raise NoData(str(exc)) from None
    except UnreadableDatabaseError as exc:
        raise click.ClickException(str(exc)) from None
