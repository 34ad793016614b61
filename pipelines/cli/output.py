"""Where the commands write: the terminal (`console`, for tables people read: pipelines/cli/
listing.py fits them to its width) and stdout as csv, tsv or json (`write_rows`, for scripts).

Every listing command takes the same `--format table|csv|tsv|json` and `--wide`
(`listing_options`): on a terminal the default is the table; in a pipe or a file it is tsv, one
line per row, so `gpuprices sources | grep KEY` finds whole lines and never a table folded at 80
columns."""

import csv
import json
import re

import click
from rich.console import Console

from pipelines.cli.options import FORMATS
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

# What cannot stand inside a tsv cell: the separator and line breaks.
TSV_BREAKS = re.compile(r"[\t\r\n\v\f\x1c-\x1e\x85\u2028\u2029]")
# The default of --format when stdout is not a terminal: one unwrapped line per row.
PIPE_FORMAT = "tsv"


def output_format(fmt: str | None) -> str:
    """The format asked for, or the default: a table on a terminal, PIPE_FORMAT elsewhere."""
    if fmt:
        return fmt
    return "table" if console.is_terminal else PIPE_FORMAT


def listing_options(rows_are: str):
    """--format and --wide of a listing command, defined once; `rows_are` says what the machine
    formats hold ("every column of marts.latest_prices"). The command receives `fmt` (resolved:
    never None) and `wide`."""
    def decorate(command):
        command = click.option(
            "--wide", is_flag=True,
            help="In a table, every column even where the terminal is too narrow (it then shows "
                 "each row as a record instead of leaving columns out).")(command)
        return click.option(
            "--format", "fmt", type=FORMATS, default=None,
            callback=lambda ctx, param, value: output_format(value),
            help="table (for people: the default on a terminal, fitted to its width), csv, json, "
                 f"or tsv (the default in a pipe or a file: a header line, then one "
                 f"tab-separated line per row); csv, tsv and json hold {rows_are}.")(command)
    return decorate


def write_rows(rows: list[dict], columns: list[str], fmt: str) -> None:
    """csv, tsv or json to stdout, every column, for scripts (columns and timestamps as in the
    feeds; in csv and tsv, text cells made safe for a spreadsheet as in the CSV feeds, and in tsv
    a tab or line break inside a cell written as a space; json as scraped)."""
    if fmt == "json":
        click.echo(json.dumps([{c: plain_value(r[c]) for c in columns} for r in rows],
                              ensure_ascii=False, indent=2))
        return
    out = click.get_text_stream("stdout")
    cells = ["" if row[c] is None else plain_value(row[c], exact=True)
             for row in rows for c in columns]
    # a spreadsheet may open this CSV as it may a feed: the feeds' rule (pipelines/feed_cells.py)
    safe = spreadsheet_safe(cells) if cells else []
    lines = [columns, *(safe[start:start + len(columns)]
                        for start in range(0, len(safe), len(columns)))]
    if fmt == "tsv":
        for line in lines:
            out.write("\t".join(TSV_BREAKS.sub(" ", str(cell)) for cell in line) + "\n")
    else:
        csv.writer(out, lineterminator="\n").writerows(lines)
    out.flush()
