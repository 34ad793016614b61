"""Reading the published database from a command: pipelines.query.published's opener, its
errors turned into the CLI's (exit 3 for no data, exit 1 for a file DuckDB refuses)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from pipelines.cli.exit_codes import NoData
from pipelines.cli.output import make_console
from pipelines.query.errors import NoDataError, UnreadableDatabaseError
from pipelines.query.published import open_published
from pipelines.warehouse.sql_files import sql_text

# Every command that reads a simulated database (`gpuprices demo`, `simulate`) says so first, on
# stderr, so csv and json on stdout stay as they are.
SIMULATED_NOTE = ("SIMULATED data (made by `gpuprices demo` or `simulate`): these are not real "
                  "prices")
notes = make_console(stderr=True)


@contextmanager
def published_db(*tables: str) -> Iterator:
    """A read-only connection to the published `data/prices.db` (never the working database, so
    a reader never blocks a run). No database, or one without `tables` yet: exit 3. A simulated
    one is named so on stderr."""
    try:
        with open_published(tables) as con:
            if con.execute(sql_text(__file__, "is_simulated")).fetchone()[0]:
                notes.print(f"[yellow bold]{SIMULATED_NOTE}[/]")
            yield con
    except NoDataError as exc:
        raise NoData(str(exc)) from None
    except UnreadableDatabaseError as exc:
        raise click.ClickException(str(exc)) from None
