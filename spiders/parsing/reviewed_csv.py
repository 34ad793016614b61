"""A reviewed table's rows: a CSV kept in the repository with a fixed header (the alias table,
the terms table), read whole; a header other than the one promised raises `error`."""

from __future__ import annotations

import csv
from pathlib import Path


def reviewed_rows(path: Path, columns: list[str], error: type[Exception]) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != columns:
            raise error(f"{path.name}: columns {reader.fieldnames}, expected {columns}")
        return list(reader)
