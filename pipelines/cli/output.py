"""Where the commands write: the terminal (`console`, for tables people read) and stdout as csv
or json (`write_rows`, for scripts)."""

import csv
import json

import click
from rich.console import Console

from pipelines.display import plain_value
from pipelines.feed_cells import spreadsheet_safe


class LineConsole(Console):
    """A console that, when its output is not a terminal (a log, a pipe, a test), writes each
    message as one line: rich would otherwise fold a long message at 80 columns, inside a path
    or a file name, so the log holds "alerts.\ntoml" and a grep for the file finds nothing.
    Tables still fit the width; on a terminal, messages wrap as rich wraps them."""

    def print(self, *objects, soft_wrap: bool | None = None, **options) -> None:
        if soft_wrap is None:
            soft_wrap = not self.is_terminal
        super().print(*objects, soft_wrap=soft_wrap, **options)


def make_console(**options) -> Console:
    """The console every command prints through (the `console` below, or one of its own file)."""
    return LineConsole(highlight=False, **options)


console = make_console(stderr=False)


def write_rows(rows: list[dict], columns: list[str], fmt: str) -> None:
    """csv or json to stdout, every column, for scripts (columns and timestamps as in the feeds;
    in csv, text cells made safe for a spreadsheet as in the CSV feeds, json as scraped)."""
    if fmt == "json":
        click.echo(json.dumps([{c: plain_value(r[c]) for c in columns} for r in rows],
                              ensure_ascii=False, indent=2))
        return
    out = click.get_text_stream("stdout")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    cells = ["" if row[c] is None else plain_value(row[c], exact=True)
             for row in rows for c in columns]
    # a spreadsheet may open this CSV as it may a feed: the feeds' rule (pipelines/feed_cells.py)
    safe = spreadsheet_safe(cells) if cells else []
    for start in range(0, len(safe), len(columns)):
        writer.writerow(safe[start:start + len(columns)])
    out.flush()
