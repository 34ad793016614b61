"""Where the commands write: the terminal (`console`, for tables people read) and stdout as csv
or json (`write_rows`, for scripts)."""

import csv
import json

import click
from rich.console import Console

from pipelines.display import plain_value
from pipelines.feed_cells import spreadsheet_safe

console = Console(stderr=False, highlight=False)


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
