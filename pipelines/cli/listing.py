"""A listing in a terminal: a table that fits the width it has, never splitting a word or an
identifier.

Each column says how it may be narrowed: an identifier or a number stays on one line (its width
is its longest cell), free text wraps between words (its width is at least its longest word).
When the columns do not fit, the least important ones (the highest `rank`) are left out, and the
caption says which (`--wide` keeps every column); when even the columns that are always shown
(rank 0) do not fit, each row is shown as a record: a heading line, then one line per field.
The widths are computed here and set on the columns, so rich never has to squeeze a column
below its longest word (its last resort folds words mid-way)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pipelines.cli.output import console as stdout_console

# Between two columns: one separator cell and a space of padding each side (box.SIMPLE_HEAD,
# no edge, no padding at the table's edges).
GAP = 3
RECORD_INDENT = 2
# Free text shorter than this is not wrapped: a two-word region on two lines reads worse than a
# column left out.
WRAP_FLOOR = 14


@dataclass(frozen=True)
class Column:
    """One column of a listing: its header, its cell (rich markup) for a row, and how it
    narrows. rank 0: always shown; higher ranks are left out first when the width is short.
    wrap: free text that may wrap between words (else one line: an identifier, a number)."""

    header: str
    cell: Callable[[dict], str]
    rank: int = 0
    justify: str = "left"
    wrap: bool = False
    style: str | None = None


def plain_lines(markup: str) -> list[str]:
    """The lines a cell shows, without its markup."""
    return Text.from_markup(markup).plain.split("\n")


def needed_widths(header: str, cells: Sequence[str], wrap: bool) -> tuple[int, int]:
    """(narrowest, widest) a column can be: for free text the narrowest is its longest word
    (or WRAP_FLOOR, or its widest if shorter), for an identifier or a number its longest line."""
    lines = [header, *(line for cell in cells for line in plain_lines(cell))]
    widest = max(cell_len(line) for line in lines)
    if not wrap:
        return widest, widest
    narrowest = max((cell_len(word) for line in lines for word in line.split()), default=1)
    return max(narrowest, min(widest, WRAP_FLOOR), 1), widest


def fit_widths(ranges: list[tuple[int, int]], wrap: list[bool], width: int) -> list[int] | None:
    """Column widths that fit `width` (the gaps included), each at least its narrowest, the
    spare given to the wrapping columns up to their widest; None: they do not fit."""
    spare = width - GAP * (len(ranges) - 1) - sum(low for low, _ in ranges)
    if spare < 0:
        return None
    widths = [low for low, _ in ranges]
    while spare > 0:
        short = [(high - widths[i], i) for i, (_, high) in enumerate(ranges)
                 if wrap[i] and widths[i] < high]
        if not short:
            break
        widths[max(short)[1]] += 1
        spare -= 1
    return widths


def show_listing(rows: list[dict], columns: Sequence[Column], *, title: str | None = None,
                 caption: str | None = None, wide: bool = False,
                 out: Console | None = None) -> None:
    """`rows` as a table that fits the console's width (see the module's docstring), with a
    title above it and a caption under it, both wrapped between words."""
    out = out or stdout_console
    width = out.width
    cells = [[column.cell(row) for column in columns] for row in rows]
    ranges = [needed_widths(c.header, [r[i] for r in cells], c.wrap)
              for i, c in enumerate(columns)]
    shown = list(range(len(columns)))
    widths = fit_widths([ranges[i] for i in shown], [columns[i].wrap for i in shown], width)
    while widths is None and not wide and any(columns[i].rank for i in shown):
        drop = max(shown, key=lambda i: (columns[i].rank, i))
        shown.remove(drop)
        widths = fit_widths([ranges[i] for i in shown], [columns[i].wrap for i in shown], width)
    left_out = [columns[i].header for i in range(len(columns)) if i not in shown]
    notes = [caption] if caption else []
    if left_out and widths is not None:
        notes.append(f"at {width} columns {', '.join(left_out)} left out: --wide shows them, "
                     "--format csv/json has every column")
    if title:
        out.print(f"[bold]{title}[/]", soft_wrap=False)
    if widths is None:
        show_records(cells, columns, out)
    else:
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        for i, column_width in zip(shown, widths, strict=True):
            column = columns[i]
            table.add_column(column.header, justify=column.justify, style=column.style,
                             width=column_width, no_wrap=not column.wrap, overflow="fold")
        for row in cells:
            table.add_row(*(row[i] for i in shown))
        out.print(table, soft_wrap=False)
    if notes:
        out.print("[dim]" + " · ".join(notes) + "[/]", soft_wrap=False)


def show_records(cells: list[list[str]], columns: Sequence[Column], out: Console) -> None:
    """Each row as a record: its first cell as a heading, then `field  value` lines, the values
    wrapped between words at the console's width."""
    key_width = max(cell_len(c.header) for c in columns[1:]) if len(columns) > 1 else 0
    for row in cells:
        out.print(f"[bold]{row[0]}[/]", soft_wrap=False)
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=RECORD_INDENT)
        grid.add_column(width=key_width, no_wrap=True, style="dim")
        grid.add_column(width=max(out.width - RECORD_INDENT - key_width - 2, 1),
                        overflow="fold")
        for column, cell in zip(columns[1:], row[1:], strict=True):
            if Text.from_markup(cell).plain.strip():
                grid.add_row("", column.header, cell)
        out.print(grid, soft_wrap=False)
