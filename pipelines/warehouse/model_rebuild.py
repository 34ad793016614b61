"""A full rebuild of every model in slices of history, so that no statement sees the whole of
`observations` at once where a model's grain allows it (the 20,000-offer year: 160.8 M rows,
whose one-statement rebuild spilled ~40 GB under the 2.5 GB memory limit and filled the disk).

The day- and month-incremental models (and merge ones) are built as the hourly update would have
built them had the history arrived a slice at a time, oldest first: the first slice in full, each
later one incrementally from its first day (ModelBatch.build_from), each with `observations`
shadowed by a temporary view of the rows before the slice's end, so a statement reads at most
the slice (and its model's lookback). The models these read are built with them in every slice
(rules, calendars, views: small); the last slice is the whole history, where every other model
is built in full, as before. The result equals a one-statement full build by the same property
that makes an hourly update equal one (tests/sql/test_incremental_marts.py; the sliced build
itself: tests/sql/test_model_rebuild.py). raw.crawls is not shadowed: the models join it
by crawl_id to the rows they read, and those that read it whole see what a full build sees.

A slice that fails rolls back its own model's transaction and raises with the shadow dropped;
the state of every sliced model and of the models they read is forgotten (they hold part of the
history), so the next build of each starts afresh."""

from __future__ import annotations

import os
import re
import time
from contextlib import suppress
from datetime import date, timedelta

import duckdb

from pipelines.warehouse.model_batch import ModelBatch
from pipelines.warehouse.sql_files import sql_text
from pipelines.warehouse.sql_model import SqlModel

# Days of history per slice: GPUPRICES_REBUILD_SLICE_DAYS (0: one slice, the whole history at
# once); unset, from the history's size against DuckDB's memory limit (slice_days_for).
SLICE_DAYS = (int(os.environ["GPUPRICES_REBUILD_SLICE_DAYS"])
              if os.environ.get("GPUPRICES_REBUILD_SLICE_DAYS") else None)
# Observations per GiB of memory limit a one-statement rebuild takes well (a year of 2,000 offers,
# 16 M rows, at 2.5 GB: 94 s, 1.2 GiB spilled; the same at 250 MB runs out of memory, and the
# 20,000-offer year, 161 M rows, spilled ~40 GB at 2.5 GB), and per GiB in a slice (about 30 days
# at both scales; measured at 1/10: 0 spilled at 2.5 GB, 145 MiB at 250 MB). Slicing a history
# that fits costs time (1.7x at a year of 2,000 offers and 2.5 GB), so it is not sliced.
WHOLE_ROWS_PER_GIB, SLICE_ROWS_PER_GIB = 10_000_000, 5_000_000
UNITS = {"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KIB": 2**10,
         "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def slice_days_for(rows: int, days: int, memory_limit: str) -> int:
    """The days per slice for a history of `rows` observations over `days` days under DuckDB's
    `memory_limit` (its text, as current_setting says it: '2.3 GiB'); 0: not sliced."""
    number, unit = re.fullmatch(r"\s*([\d.]+)\s*([A-Za-z]*)\s*", memory_limit).groups()
    gib = float(number) * UNITS[unit.upper()] / 2**30
    if rows <= WHOLE_ROWS_PER_GIB * gib or days <= 1:
        return 0
    return max(1, int(days * SLICE_ROWS_PER_GIB * gib / rows))


def sliced(model: SqlModel) -> bool:
    """A model the slices build: a table rebuilt incrementally from a first day."""
    return (model.materialized == "table" and model.incremental_by is not None
            and model.incremental_grain != "key")


def slice_ends(first: date, last: date, days: int) -> list[date]:
    """The end (exclusive) of every slice but the last, oldest first: every `days` days from
    `first`, while a day of history is left after it (the last slice is open-ended)."""
    if days <= 0:
        return []
    ends, end = [], first + timedelta(days=days)
    while end <= last:
        ends.append(end)
        end += timedelta(days=days)
    return ends


def upstream_closure(models: list[SqlModel]) -> list[SqlModel]:
    """The sliced models and every model they read, directly or not, in `models`' order."""
    by_table = {m.table: m for m in models}
    needed: set[str] = set()
    stack = [m.table for m in models if sliced(m)]
    while stack:
        table = stack.pop()
        if table not in needed:
            needed.add(table)
            stack.extend(t for t in by_table[table].reads if t in by_table)
    return [m for m in models if m.table in needed]


def _shadow(con, end: date | None) -> None:
    """Let `observations` read only the rows before `end` (None: every row again)."""
    if end is None:
        con.execute("drop view if exists temp.main.observations")
        return
    catalog = con.execute("select current_database()").fetchone()[0]
    con.execute(f'create or replace temporary view observations as select * from '
                f'"{catalog}".main.observations where observed_hour < '
                f"timestamptz '{end.isoformat()} 00:00:00+00'")


def rebuild_models(con, models: list[SqlModel], slice_days: int | None = SLICE_DAYS,
                   batch: ModelBatch | None = None) -> list[tuple[str, str, float]]:
    """Rebuild every model of `models` (dependency order) in full, the sliced ones a slice at a
    time (`slice_days` days each; None: slice_days_for); returns (table, how, seconds) per
    build, the slices' builds summed per model."""
    batch = batch or ModelBatch(con)
    first, last, rows, limit = con.execute(
        "select min(observed_hour)::date, max(observed_hour)::date, count(*), "
        "current_setting('memory_limit') from observations").fetchone()
    if slice_days is None:
        slice_days = slice_days_for(rows, (last - first).days + 1, limit) if first else 0
    ends = slice_ends(first, last, slice_days) if first else []
    seconds: dict[str, float] = {}
    hows: dict[str, str] = {}

    def timed(model: SqlModel, build) -> None:
        started = time.perf_counter()
        hows[model.table] = build()
        seconds[model.table] = seconds.get(model.table, 0.0) + time.perf_counter() - started

    try:
        for i, end in enumerate(ends):
            _shadow(con, end)
            for model in upstream_closure(models):
                if i and sliced(model):
                    day = ends[i - 1].isoformat()
                    timed(model, lambda m=model, d=day: batch.build_from(m, d))
                else:
                    timed(model, lambda m=model: batch.build(m, full=True))
        _shadow(con, None)
        for model in models:
            if ends and sliced(model):
                timed(model, lambda m=model: batch.build_from(m, ends[-1].isoformat()))
            else:
                timed(model, lambda m=model: batch.build(m, full=True))
    except BaseException:
        _shadow(con, None)
        if ends:        # the slices' models hold part of the history: built anew next time
            with suppress(duckdb.Error):   # (no state table yet: nothing was built)
                con.execute(sql_text(__file__, "forget_model_state"),
                            {"models": [m.table for m in upstream_closure(models)]})
            batch.forget()
        raise
    return [(m.table, "full" if ends and sliced(m) else hows[m.table], seconds[m.table])
            for m in models]
