"""Pipe tables of a Markdown document (the documentation archives' price tables): a header row,
a separator row of dashes and colons, then data rows, each cell trimmed. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass

SEPARATOR_CELL_RE = re.compile(r"^:?-{2,}:?$")
NUMBER_CELL_RE = re.compile(r"^\d+(?:\.\d+)?$")     # a price cell of a plain number: '2.00'


@dataclass(frozen=True)
class Table:
    line: int                               # the header's line (1 = first line)
    headers: list[str]
    rows: list[tuple[int, dict[str, str]]]  # (line, {header: cell})


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]


def markdown_tables(text: str) -> list[Table]:
    """Every pipe table of the text, in order."""
    lines = text.splitlines()
    tables: list[Table] = []
    n = 0
    while n + 1 < len(lines):
        head, sep = lines[n].strip(), lines[n + 1].strip()
        separators = _cells(sep) if sep.startswith("|") else []
        if head.startswith("|") and separators and \
                all(SEPARATOR_CELL_RE.match(c) for c in separators):
            headers = _cells(head)
            rows, n = [], n + 2
            while n < len(lines) and lines[n].strip().startswith("|"):
                rows.append((n + 1, dict(zip(headers, _cells(lines[n]), strict=False))))
                n += 1
            tables.append(Table(n - len(rows) - 1, headers, rows))
        else:
            n += 1
    return tables


def table_with(text: str, header: str) -> Table | None:
    """The first table a header of which contains `header`."""
    return next((t for t in markdown_tables(text) if any(header in h for h in t.headers)), None)
