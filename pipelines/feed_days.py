"""Dated feeds: a mart that grows with its history is written as one file per day of its date
column, `feeds/<mart>/<day>.csv` and `.parquet` (per month for a month grain: the month's first
day), beside one `feeds/<mart>.schema.json`, and a run writes only the days that changed.
Written whole every hour, the feeds grew with the history: at 20,000 offers x a year the marts
are 22 million rows, 6 GB of CSV, about 70 s of every hourly run (issue 45).

Two kinds, each with its rule for the days that changed:
* a mart whose model is incremental by a date column at a day or month grain, or a view of one
  such model alone that shows that column (price_history of int_offer_local_daily): the
  generations' rule (generations.model_change) from the build of that model the mart's files
  were last written from: the days from the first one its model rebuilt since, or every day
  when it was rebuilt from scratch;
* another view whose grain has a date (card_history, chart_points: their ranks and segments
  come from every day, so no model says which days moved): each day's rows are hashed (a count
  and a sum of row hashes) and the days whose digest changed are written: computing the view
  is a fraction of writing it.
What the files hold is recorded per mart in `feeds/.state.json` (the mart's columns, and the
build or the days' digests); every day is written when nothing records it (a first run, a mart's
folder that went missing) or its columns changed. Days that no longer have rows lose their files
(publish.move_days). Each file is replaced by a rename, so a reader of one file reads the old or
the new one whole; the record is moved after every file, so a run stopped on the way writes the
same days again, or more, never fewer."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pipelines.generations import model_change, model_states
from pipelines.publish import (
    BOM,
    REMOVES,
    REPLACES,
    feed_copies,
    publish_feed,
    write_feed_schema,
    write_text_atomically,
)
from pipelines.warehouse.crawl_first_days import crawls_since

STATE_NAME = ".state.json"      # in the feeds directory: what each dated mart's files hold


@dataclass(frozen=True)
class DatedMart:
    columns: tuple[str, ...]    # its date column (the first of these it has, of type DATE)
    base: str | None            # the table model whose builds say which days changed; None: the
                                # days' digests do


@cache
def dated_marts() -> dict[str, DatedMart]:
    """{mart: how it is dated} for every mart written by days."""
    from pipelines.warehouse.model_contract import model_contract
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
            base = models[reads[0]] if len(reads) == 1 and reads[0] in models else model
        if (base.materialized != "view" and base.incremental_by
                and base.incremental_grain in ("day", "month")):
            dated[model.table] = DatedMart((base.incremental_by,), base.table)
        elif model.materialized == "view" and model_contract(model).grain:
            dated[model.table] = DatedMart(model_contract(model).grain, None)
    return dated


def read_state(feeds: Path) -> dict[str, dict]:
    """{mart: what its files hold: {"columns", and "build" or "days"}}; {} when nothing records
    it (an entry of another shape is left out: its mart is written whole)."""
    try:
        state = json.loads((feeds / STATE_NAME).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    marts = state.get("marts", {}) if isinstance(state, dict) else {}
    return {mart: held for mart, held in marts.items()
            if isinstance(held, dict) and isinstance(held.get("columns"), list)}


def _date_column(columns: list[list[str]], mart: DatedMart) -> str | None:
    types = dict(columns)
    return next((c for c in mart.columns if types.get(c) == "DATE"), None)


def day_digests(con, table: str, column: str) -> dict[str, str]:
    """{day: "<rows>:<sum of their row hashes>"} of `table` (the rows are unique by its grain)."""
    return {day: digest for day, digest in con.execute(
        f"select t.{column}::varchar, count(*) || ':' || sum(hash(t))::hugeint "
        f"from {table} as t group by 1").fetchall()}


def write_dated_feed(con, table: str, column: str, out_dir: Path, bom: bool = False, *,
                     since: str | None = None, days: list[str] | None = None,
                     removed: list[str] | None = None, read: str | None = None) -> dict:
    """The days of `table` as out_dir/<mart>/<day>.csv (as publish_feed writes a CSV: header, ISO
    8601 UTC, cells safe for spreadsheets) and .parquet, and out_dir/<mart>.schema.json: the days
    from `since` (an ISO date), or those listed in `days`, or every day; with the marker saying
    which published days the folder replaces (from `since`, or every day) or removes (`removed`).
    `read`: where its rows are read from, when not the table itself (a copy made once).
    Returns {"rows", "days", "from", "csv" (the folder), "schema"}."""
    name = table.split(".")[-1]
    folder = out_dir / name
    folder.mkdir(parents=True)
    where = (f"where {column} >= date '{since}'" if since
             else f"where {column}::varchar in ({', '.join(repr(d) for d in days)})"
             if days is not None else "")
    read = read or table
    written_days = set()
    if days != []:
        for suffix, select, options in feed_copies(con, read):
            written_days |= _copy_days(con, f"select * from ({select}) {where}", column, options,
                                       out_dir / f".{name}.{suffix}.parts", folder, suffix, bom)
    if removed is not None:
        (folder / REMOVES).write_text("".join(f"{d}\n" for d in removed), encoding="utf-8")
    else:
        (folder / REPLACES).write_text(since or "", encoding="utf-8")
    rows = con.execute(f"select count(*) from {read} {where}").fetchone()[0] if days != [] else 0
    schema_path = write_feed_schema(con, read, table, out_dir, f"{name}/*.csv",
                                    partitioned_by=column)
    return {"rows": rows, "days": len(written_days), "from": since or (min(days) if days else None),
            "csv": folder, "schema": schema_path}


def _copy_days(con, select: str, column: str, options: str, scratch: Path, folder: Path,
               suffix: str, bom: bool) -> set[str]:
    """One pass over the days: DuckDB writes <column>=<day>/part0.<suffix> (columns kept), each
    renamed to folder/<day>.<suffix>. Returns the days written."""
    shutil.rmtree(scratch, ignore_errors=True)
    con.execute(f"copy ({select}) to '{scratch}' ({options}, partition_by ({column}), "
                "write_partition_columns true, filename_pattern 'part')")
    days = set()
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
    return days


def write_feeds(con, tables: list[str], staged: Path, feeds: Path, bom: bool,
                source=lambda con, table: None) -> Iterator[tuple[str, dict]]:
    """Write each of `tables` into `staged`: a dated mart by the days that changed since its files
    were written (write_dated_feed; nothing when none did), any other whole (publish_feed, from
    `source(con, table)` when it names a view of it); then the record of what the dated marts'
    files hold once moved, staged as STATE_NAME. Yields (table, what was written)."""
    state = read_state(feeds)
    built = model_states(con, con.execute("select current_database()").fetchone()[0])
    builds = [h["build"][0] for h in state.values() if h.get("build")]
    loaded: list[list[tuple]] = []

    def crawls_loaded() -> list[tuple]:     # read once, from the earliest build a mart holds
        if not loaded:
            loaded.append(crawls_since(con, min(builds)) if builds else [])
        return loaded[0]

    for table in tables:
        mart = dated_marts().get(table)
        columns = [[n, t] for n, t, *_ in con.execute(f"describe {table}").fetchall()]
        column = _date_column(columns, mart) if mart else None
        if column is None:
            state.pop(table, None)      # one file (again): nothing to record
            yield table, publish_feed(con, table, staged, bom, source(con, table))
            continue
        name = table.split(".")[-1]
        held = state.pop(table, None)
        if held is not None and (held["columns"] != columns or not (feeds / name).is_dir()):
            held = None                 # columns changed, or the folder is gone: every day
        if mart.base is None:   # the view computed once, for its digests and the days written
            con.execute(f"create or replace temp table feed_view_rows as select * from {table}")
            try:
                digests = day_digests(con, "temp.feed_view_rows", column)
                state[table] = {"columns": columns, "days": digests}
                if held is None or not isinstance(held.get("days"), dict):
                    yield table, write_dated_feed(con, table, column, staged, bom,
                                                  read="temp.feed_view_rows")
                    continue
                changed = sorted(d for d, h in digests.items() if held["days"].get(d) != h)
                removed = sorted(set(held["days"]) - set(digests))
                if changed or removed:
                    yield table, write_dated_feed(con, table, column, staged, bom, days=changed,
                                                  removed=removed, read="temp.feed_view_rows")
                    continue
            finally:
                con.execute("drop table if exists temp.feed_view_rows")
            change = "unchanged"
        else:
            change = "whole" if held is None or not held.get("build") else model_change(
                mart.base, {mart.base: held["build"]}, built, crawls_loaded)
            if mart.base in built:
                state[table] = {"columns": columns, "build": built[mart.base]}
            if change != "unchanged":
                yield table, write_dated_feed(con, table, column, staged, bom,
                                              since=None if change == "whole" else change)
                continue
        yield table, {"rows": 0, "days": 0, "from": "unchanged", "csv": staged / name}
    staged.mkdir(parents=True, exist_ok=True)
    write_text_atomically(staged / STATE_NAME, json.dumps({"marts": state}, indent=1) + "\n",
                          sync=False)
