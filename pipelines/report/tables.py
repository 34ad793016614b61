"""The report's tables as data: columns that turn a query row into cells, and the cells the
`table` macro of templates/macros.html.j2 draws. Cells hold text, never markup, so everything
scraped is escaped by the templates; values from web pages go through `clean_text` first
(hidden characters shown, long values cut), and a URL becomes a link only when it is safe."""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pipelines.display import HIDDEN_CHARS, clean_text
from pipelines.report.formatting import MISSING

MAX_URL_CHARS = 2048        # longer URLs are not made into links


@dataclass(frozen=True)
class Cell:
    """A table cell richer than one text: a link, a tinted span with hover text, or text with a
    muted note under it (or beside it, `inline_note`)."""
    text: str
    note: str | None = None
    inline_note: bool = False
    css: str | None = None          # class of a span around `text`
    title: str | None = None        # hover text of that span
    href: str | None = None         # `text` links here (only ever an http(s) URL)


Content = str | Cell


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[dict], Content]     # row -> the cell's content
    css: str = ""                       # "num": right-aligned figures; "nw": no wrapping


@dataclass(frozen=True)
class Table:
    """What the `table` macro draws: the rows' cells, or the sentence `empty` when none."""
    columns: Sequence[Column]
    rows: list[list[Content]]
    empty: str


def col(header: str, key: str, fmt: Callable[[Any], str] = clean_text, css: str = "") -> Column:
    """A column showing row[key] formatted by `fmt`."""
    return Column(header, lambda row: fmt(row.get(key)), css)


def table(columns: Sequence[Column], rows: Iterable[dict], empty: str) -> Table:
    return Table(columns, [[c.cell(row) for c in columns] for row in rows], empty)


def link_cell(url: Any) -> Content:
    """An http(s) URL as a link showing its host; anything else (javascript:, data:, junk) as
    plain text, so a scraped URL can never run code."""
    raw = "" if url is None else str(url)
    try:
        parts = urlsplit(raw)
    except ValueError:
        parts = None
    if (parts is None or parts.scheme.lower() not in ("http", "https") or not parts.netloc
            or len(raw) > MAX_URL_CHARS or HIDDEN_CHARS.search(raw)):
        return clean_text(raw) if raw else MISSING
    return Cell(clean_text(parts.hostname or parts.netloc), href=raw)


def region_cell(row: dict) -> Cell:
    """The region group with the vendor's own region code beside it."""
    return Cell(clean_text(row.get("region_group")), note=clean_text(row.get("region_code")),
                inline_note=True)
