"""The id that names a table row in its sku (spiders/base/html_table.py): the row's text and the
card count its count column or cells write. An identity only: rows that share a card text
("A100 80G" priced for 1 and for 8 cards) stay apart, and their offer ids (which hold the sku) do
not change. The offer's gpu_count is never taken from it; normalization reads the count the same
cells write, with the same reader (spiders/parsing/counts.py), and checks it against the column.
"""

from __future__ import annotations

from spiders.parsing.counts import GpuCountError, gpu_count_in_text


def sku_count(column: str | None, gpu_text: str | None, config_text: str | None) -> str | int:
    """The count column as written, else the count the card or configuration cells write, else 1
    (also when they write two: normalization quarantines that row with why)."""
    if column:
        return column
    try:
        return gpu_count_in_text(gpu_text, config_text) or 1
    except GpuCountError:
        return 1
