"""The read layer's filters (pipelines/query/filters.py) as the commands' options: a value
nobody knows becomes a usage error naming the option (exit 2), with the same message; and the
note under a table of how many held prices were left out."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from pipelines.query.errors import UnknownValueError


@contextmanager
def option_errors() -> Iterator[None]:
    """An UnknownValueError of the read layer as click's BadParameter for its option: an
    unknown --card, --region or --vendor exits 2 with the known values."""
    try:
        yield
    except UnknownValueError as exc:
        raise click.BadParameter(exc.message,
                                 param_hint=f"--{exc.field.replace('_', '-')}") from None


def held_note(held: int) -> str:
    return (f"{held} held price{'s' if held != 1 else ''} left out (outliers no later crawl has "
            "confirmed; --include-held shows them)")
