"""How many rows a query scans, per table, from DuckDB's own profile: the measure of what an hourly
update reads that no machine's load can move (tests/sql/test_hourly_scans.py compares it across
history lengths; the bench prints it beside the times)."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

from pipelines.warehouse.sql_files import sql_text


def _scans(node: dict, counts: Counter) -> None:
    if node.get("type") == "TABLE_SCAN":
        table = node.get("extra_info", {}).get("Table", "?")
        counts[table.split(".", 1)[-1]] += int(node.get("intermediate_rows") or 0)
    for child in node.get("children", []):
        _scans(child, counts)


def rows_scanned(con, sql: str) -> Counter:
    """Run `sql` (a select) once, profiled; the rows each table scan produced, by table
    (`schema.table`, the database name dropped), after the filters pushed into the scan."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "profile.json"
        con.execute("pragma enable_profiling = 'json'")
        con.execute(f"pragma profiling_output = '{out}'")
        try:
            con.execute(sql_text(__file__, "count_rows").format(select=sql)).fetchall()
        finally:
            con.execute("pragma disable_profiling")
        profile = json.loads(out.read_text(encoding="utf-8"))
    counts: Counter = Counter()
    for node in profile.get("operator", profile.get("children", [])):
        _scans(node, counts)
    return counts
