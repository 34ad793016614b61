"""What an archive parser returns: one offer a version of a file lists, in the raw item's own
words (the fields spiders/items.py names), with the cloud it belongs to and the line it is on.
The loader adds what every offer of a version shares (source, vendor, time, provenance)."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation


@dataclass(frozen=True)
class ArchiveOffer:
    cloud: str            # the archive's own name of the cloud: 'aws', 'Lambda Labs'
    line: int             # the line of the version the offer is read from (1 = first line)
    fields: dict = field(default_factory=dict)   # raw item fields: sku, gpu_text, prices, ...


@dataclass(frozen=True)
class Parsed:
    """A version read: its offers, and the rows it lists that are not offers, by why."""

    offers: list[ArchiveOffer]
    left_out: dict[str, int] = field(default_factory=dict)


def csv_rows(text: str) -> list[tuple[int, dict]]:
    """(line, row) for each data row of a CSV with a header (line 1); a quoted cell spanning
    lines puts the row on its first line. Text that is not CSV raises ValueError."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows, start = [], 2
    try:
        for row in reader:
            rows.append((start, {(k or "").strip(): (v or "").strip() for k, v in row.items()
                                 if isinstance(v, str | type(None))}))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise ValueError(f"not a CSV file: {exc}") from exc
    return rows


def positive(text: str | None) -> str | None:
    """`text` when it is a number above zero ('1.20'), else None: an empty cell, '0.00' (a
    placeholder), 'nan', a word."""
    try:
        amount = Decimal((text or "").strip())
    except InvalidOperation:
        return None
    return text.strip() if amount.is_finite() and amount > 0 else None


def whole_count(text: str | None) -> str | None:
    """'8.0' -> '8'; any other text as written (normalization judges it)."""
    text = (text or "").strip()
    return re.sub(r"\.0+$", "", text) if re.fullmatch(r"\d+\.0+", text) else text or None


def count_left_out(left_out: dict[str, int], why: str) -> None:
    left_out[why] = left_out.get(why, 0) + 1
