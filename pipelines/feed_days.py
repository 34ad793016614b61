"""Dated feeds: a mart that grows with its history is written as one file per day of its date
column, `feeds/<mart>/<day>.csv` and `.parquet` (per month for a month grain: the month's first
day), beside one `feeds/<mart>.schema.json`, and a run writes only the days its models rebuilt.
Written whole every hour, the feeds grew with the history: at 20,000 offers x a year the marts
are 22 million rows, 6 GB of CSV, about 70 s of every hourly run (issue 45).

A mart is dated when its model is incremental by a date column at a day or month grain, or is
a view of one such model alone that shows that column (price_history of int_offer_local_daily).
The days a run writes follow the generations' rule (generations.model_change) from the build of
that model the mart's files were last written from, recorded per mart in `feeds/.state.json`:
the days from the first one its model rebuilt since, or every day when it was rebuilt from
scratch or nothing records it (a first run, a mart's folder that went missing). Days from there
on that no longer have rows lose their files (publish.move_staged). Each file is replaced by a
rename, so a reader of one file reads the old or the new one whole; the record is moved after
every file, so a run stopped on the way writes the same days again, or more, never fewer."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from pipelines.feed_cells import csv_safe_select
from pipelines.generations import model_change, model_states
from pipelines.publish import (
    BOM,
    CSV_OPTIONS,
    REPLACES,
    csv_schema,
    publish_feed,
    write_text_atomically,
)
from pipelines.warehouse.crawl_first_days import crawls_since

STATE_NAME = ".state.json"      # in the feeds directory: what each dated mart's files hold


@cache
def dated_marts() -> dict[str, tuple[str, str]]:
    """{mart: (its date column, the table model whose builds say which days changed)}."""
    from pipelines.warehouse.sql_models import PYTHON_TABLES, load_models
    from spiders.layout import SQL_DIR

    models = {m.table: m for m in load_models(SQL_DIR, PYTHON_TABLES)}
    dated = {}
    for model in models.values():
        if model.layer != "marts":
            continue
        base = model
        if model.materialized == "view":    # a view of one model shows that model's days
            reads = list(model.reads)
            if len(reads) != 1 or reads[0] not in models:
                continue
            base = models[reads[0]]
        if (base.materialized != "view" and base.incremental_by
                and base.incremental_grain in ("day", "month")):
            dated[model.table] = (base.incremental_by, base.table)
    return dated


def read_state(feeds: Path) -> dict[str, list]:
    """{mart: the build of its model its files hold}; {} when nothing records it."""
    try:
        state = json.loads((feeds / STATE_NAME).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return state.get("marts", {}) if isinstance(state, dict) else {}


def _columns(con, table: str) -> set[str]:
    return {name for name, *_ in con.execute(f"describe {table}").fetchall()}


def write_dated_feed(con, table: str, column: str, since: str | None, out_dir: Path,
                     bom: bool = False) -> dict:
    """The days of `table` from `since` (an ISO date; None: every day) as out_dir/<mart>/<day>.csv
    (as publish_feed writes a CSV: header, ISO 8601 UTC, cells safe for spreadsheets) and
    .parquet, plus the marker saying which days the folder replaces, and out_dir/<mart>.schema.json.
    Returns {"rows", "days", "from", "csv" (the folder), "schema"}."""
    name = table.split(".")[-1]
    folder = out_dir / name
    folder.mkdir(parents=True)
    where = f"where {column} >= date '{since}'" if since else ""
    con.execute("set TimeZone = 'UTC'")
    days = set()
    for suffix, select, options in (("csv", csv_safe_select(con, table), CSV_OPTIONS),
                                    ("parquet", f"select * from {table}", "format parquet")):
        scratch = out_dir / f".{name}.{suffix}.parts"
        shutil.rmtree(scratch, ignore_errors=True)
        # one pass over the days: DuckDB writes <column>=<day>/part0.<suffix>, columns kept
        con.execute(f"copy (select * from ({select}) {where}) to '{scratch}' ({options}, "
                    f"partition_by ({column}), write_partition_columns true, "
                    "filename_pattern 'part')")
        for part in sorted(scratch.iterdir()) if scratch.exists() else []:
            day = part.name.split("=", 1)[1]
            (written,) = part.iterdir()     # one file a day (DuckDB's default: no size split)
            target = folder / f"{day}.{suffix}"
            if suffix == "csv" and bom:
                target.write_bytes(BOM + written.read_bytes())
            else:
                os.replace(written, target)
            days.add(day)
        shutil.rmtree(scratch, ignore_errors=True)
    (folder / REPLACES).write_text(since or "", encoding="utf-8")
    rows = con.execute(f"select count(*) from {table} {where}").fetchone()[0]
    schema = {**csv_schema(con, table, f"{name}/*.csv"), "table": table, "partitioned_by": column}
    schema_path = write_text_atomically(
        out_dir / f"{name}.schema.json",
        json.dumps(schema, ensure_ascii=False, indent=1) + "\n", sync=False)
    return {"rows": rows, "days": len(days), "from": since, "csv": folder, "schema": schema_path}


def write_feeds(con, tables: list[str], staged: Path, feeds: Path, bom: bool,
                source=lambda con, table: None) -> Iterator[tuple[str, dict]]:
    """Write each of `tables` into `staged`: a dated mart by the days that changed since its files
    were written (write_dated_feed; nothing when none did), any other whole (publish_feed, from
    `source(con, table)` when it names a view of it); then the record of what the dated marts'
    files hold once moved, staged as STATE_NAME. Yields (table, what was written)."""
    held = read_state(feeds)
    built = model_states(con, con.execute("select current_database()").fetchone()[0])
    loaded: list[list[tuple]] = []

    def crawls_loaded() -> list[tuple]:     # read once, from the earliest build a mart holds
        if not loaded:
            loaded.append(crawls_since(con, min(b[0] for b in held.values())) if held else [])
        return loaded[0]

    state = dict(held)
    for table in tables:
        dated = dated_marts().get(table)
        if dated is None or dated[0] not in _columns(con, table):
            state.pop(table, None)      # one file (again): nothing to record
            yield table, publish_feed(con, table, staged, bom, source(con, table))
            continue
        column, base = dated
        name = table.split(".")[-1]
        change = "whole" if table not in held or not (feeds / name).is_dir() else model_change(
            base, {base: held[table]}, built, crawls_loaded)
        if change != "unchanged":
            yield table, write_dated_feed(con, table, column, None if change == "whole" else change,
                                          staged, bom)
        else:
            yield table, {"rows": 0, "days": 0, "from": "unchanged", "csv": staged / name}
        if base in built:
            state[table] = built[base]
    staged.mkdir(parents=True, exist_ok=True)
    write_text_atomically(staged / STATE_NAME, json.dumps({"marts": state}, indent=1) + "\n",
                          sync=False)
