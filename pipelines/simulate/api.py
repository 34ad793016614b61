"""The simulator's Python API: `simulate`, `append_hour`, `run_models` and the safety checks that
keep simulated data out of the real history."""

from __future__ import annotations

import calendar
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from pipelines.simulate.common import CHUNK_ROWS, NOISE_PCT, SimulationError
from pipelines.simulate.effects import Effect, effect_record
from pipelines.simulate.plan import TRUTH_COLUMNS, Plan, plan_simulation
from pipelines.simulate.rows import hour_of, insert_hours, register_plan
from pipelines.warehouse.db import DUCKDB_CONFIG, ensure_schema, transaction
from pipelines.warehouse.sql_files import sql_text

TRUTH_SCHEMA = sql_text(__file__, "truth_schema")
INSERT_TRUTH = sql_text(__file__, "insert_truth")
INSERT_SCENARIO = sql_text(__file__, "insert_scenario")

@dataclass(frozen=True)
class ModelBuild:
    table: str
    how: str          # "view" | "full" | "incremental from <day>" | "up to date"
    seconds: float


@dataclass(frozen=True)
class SimulationResult:
    rows: int                       # observations written
    offers: int
    seconds: float                  # writing the observations and crawls (models excluded)
    db_path: Path | None = None
    start: datetime | None = None
    end: datetime | None = None     # exclusive
    crawls: int = 0
    models: tuple[ModelBuild, ...] = ()
    models_seconds: float = 0.0
    notes: tuple[str, ...] = ()     # effects that could not be applied everywhere, and why
    truth_rows: int = 0             # rows written to truth.offer_effects

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds else float("nan")


def check_target(db_path: str | Path) -> Path:
    """The simulated database's path, refusing the real one: never a file named prices.db, never
    the configured data/prices.db, never a database holding crawls that were not simulated."""
    from spiders.layout import db_path as real_db_path

    path = Path(db_path).expanduser().resolve()
    if path.name.lower() == "prices.db" or path == real_db_path().resolve():
        raise SimulationError(f"refusing to write simulated data into {path}: that is the real "
                              "price history (use e.g. data/simulated.db)")
    return path


def _is_simulated(path: Path) -> bool:
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        raise SimulationError(f"{path}: cannot open it as a DuckDB database, so cannot tell it "
                              f"was simulated; leaving it alone ({exc})") from exc
    try:
        return _holds_only_simulated(con)
    finally:
        con.close()


def _holds_only_simulated(con: duckdb.DuckDBPyConnection) -> bool:
    tables = {r[0] for r in con.execute(
        "select schema_name || '.' || table_name from duckdb_tables()").fetchall()}
    if "raw.crawls" not in tables:
        return "main.observations" not in tables
    return con.execute("select count(*) from raw.crawls where mode <> 'simulated'"
                       ).fetchone()[0] == 0


def connect(path: Path) -> duckdb.DuckDBPyConnection:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return duckdb.connect(str(path), config=dict(DUCKDB_CONFIG))
    except duckdb.IOException as exc:
        raise SimulationError(f"{path}: cannot open for writing ({exc})") from exc


def _fresh_database(path: Path) -> duckdb.DuckDBPyConnection:
    if path.exists():
        if not _is_simulated(path):
            raise SimulationError(f"{path} holds data that was not simulated; refusing to replace "
                                  "it (pick another --db)")
        path.unlink()
        Path(f"{path}.wal").unlink(missing_ok=True)
    con = connect(path)
    ensure_schema(con)
    return con


def run_models(con: duckdb.DuckDBPyConnection, full: bool = False) -> list[ModelBuild]:
    """Every dbt_like_sql model in dependency order, each in its own transaction (incremental
    ones incrementally unless `full`), then the price index's new days (marts.price_index,
    appended)."""
    from pipelines.index import INDEX_TABLE, publish_index
    from pipelines.warehouse.model_batch import ModelBatch
    from pipelines.warehouse.model_rebuild import rebuild_models
    from pipelines.warehouse.sql_models import load_models
    from spiders.layout import SQL_DIR

    builds = []
    batch = ModelBatch(con)
    if full:    # a slice of history at a time where a model's grain allows (model_rebuild.py)
        builds = [ModelBuild(*build) for build in
                  rebuild_models(con, load_models(SQL_DIR), batch=batch)]
    for model in [] if full else load_models(SQL_DIR):
        started = time.perf_counter()
        how = batch.build(model)
        builds.append(ModelBuild(model.table, how, time.perf_counter() - started))
    # the price index's step, as a run's price_index asset runs it after the models
    started = time.perf_counter()
    published = publish_index(con, datetime.now(UTC))
    builds.append(ModelBuild(INDEX_TABLE, f"appended {published.appended}",
                             time.perf_counter() - started))
    return builds


def write_truth(con: duckdb.DuckDBPyConnection, plan: Plan, effects: Sequence[Effect], *,
                seed: int, noise_pct: float, start: datetime, days: int | None,
                every_hours: int | None) -> int:
    """The truth tables (created if missing), one truth.scenario row and the plan's truth rows
    (truth.offer_effects); returns the truth rows written."""
    catalog = _catalog(con)
    con.execute(TRUTH_SCHEMA.replace("{catalog}", catalog))
    records = json.dumps([effect_record(e) for e in effects], ensure_ascii=False)
    con.execute(INSERT_SCENARIO.replace("{catalog}", catalog),
                [seed, noise_pct, start, days, every_hours, len(plan.keys), records])
    if not plan.truth_rows:
        return 0
    frame = pd.DataFrame([_truth_text(row) for row in plan.truth_rows],
                         columns=list(TRUTH_COLUMNS))
    for col in ("size_pct", "ratio"):
        frame[col] = frame[col].astype(float)
    con.register("sim_truth", frame)
    try:
        con.execute(INSERT_TRUTH.replace("{catalog}", catalog))
    finally:
        con.unregister("sim_truth")
    return len(frame)


def _missing(value) -> bool:
    return value is None or value is pd.NaT or value is pd.NA or (
        isinstance(value, float) and np.isnan(value))


def _truth_text(row: dict) -> dict:
    """A truth row with text columns as str (times ISO, detail JSON) and numbers as float; what
    is missing is None."""
    out: dict = {}
    for col in TRUTH_COLUMNS:
        value = row.get(col)
        if _missing(value):
            out[col] = None
        elif col in ("size_pct", "ratio"):
            out[col] = float(value)
        elif col in ("starts_at", "ends_at") and not isinstance(value, str):
            stamp = pd.Timestamp(value)
            out[col] = (stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp).isoformat()
        elif col == "detail" and not isinstance(value, str):
            out[col] = json.dumps(value, ensure_ascii=False, default=str)
        else:
            out[col] = str(value)
    return out


def _catalog(con: duckdb.DuckDBPyConnection) -> str:
    """The database's catalog, quoted: `truth.x` alone is ambiguous in a file named truth.db."""
    name = con.execute("select current_database()").fetchall()[0][0]
    return '"' + name.replace('"', '""') + '"'


def simulate(db_path: str | Path, *, start: date | datetime | str, days: int,
             offers: pd.DataFrame | Iterable[dict], effects: Sequence[Effect] = (), seed: int = 0,
             every_hours: int = 1, build_models: bool = True, noise_pct: float = NOISE_PCT,
             progress: Callable[[int, int], None] | None = None) -> SimulationResult:
    """Write `days` days of observations from `start` (00:00 UTC) into a fresh simulated database
    (an existing simulated one is replaced), one crawl every `every_hours` hours per source, then
    build every SQL model on it. `progress(rows_done, rows_total)` is called per chunk."""
    path = check_target(db_path)
    if days < 1:
        raise SimulationError(f"days must be at least 1, got {days}")
    if every_hours < 1:
        raise SimulationError(f"every_hours must be at least 1, got {every_hours}")
    start_dt = _start_datetime(start)
    plan = plan_simulation(offers, effects, seed, noise_pct, start=start_dt)
    first = hour_of(start_dt)
    hours = np.arange(first, first + days * 24, every_hours, dtype=np.int64)
    n_offers = len(plan.keys)
    total = len(hours) * n_offers
    step = max(1, CHUNK_ROWS // n_offers)

    started = time.perf_counter()
    con = _fresh_database(path)
    try:
        con.execute("set preserve_insertion_order = false")   # lets DuckDB write in parallel
        register_plan(con, plan)
        truth_rows = write_truth(con, plan, effects, seed=seed, noise_pct=noise_pct,
                                 start=start_dt, days=days, every_hours=every_hours)
        normalized_at = datetime.now(UTC)
        written = 0
        for i in range(0, len(hours), step):
            written += insert_hours(con, plan, hours[i:i + step], normalized_at, f"sim-seed-{seed}")
            if progress:
                progress(written, max(total, written))
        con.execute("checkpoint")
    except BaseException:
        con.close()                       # a half-written simulation is not left behind
        path.unlink(missing_ok=True)
        Path(f"{path}.wal").unlink(missing_ok=True)
        raise
    seconds = time.perf_counter() - started
    builds: list[ModelBuild] = []
    models_seconds = 0.0
    try:
        if build_models:
            t0 = time.perf_counter()
            builds = run_models(con, full=True)
            models_seconds = time.perf_counter() - t0
            con.execute("checkpoint")
    finally:
        con.close()
    end = start_dt + timedelta(days=days)
    return SimulationResult(rows=written, offers=n_offers, seconds=seconds, db_path=path,
                            start=start_dt, end=end, crawls=len(hours) * len(plan.sources),
                            models=tuple(builds), models_seconds=models_seconds,
                            notes=tuple(plan.notes), truth_rows=truth_rows)


def append_hour(db_path: str | Path, hour: datetime, offers: pd.DataFrame | Iterable[dict],
                effects: Sequence[Effect] = (), seed: int = 0, *,
                noise_pct: float = NOISE_PCT, plan: Plan | None = None) -> int:
    """Add one more crawl hour (every offer observed once, one raw.crawls row per source) to a
    simulated database, exactly as a longer simulation would have written it; already present
    rows are left alone. Models are not rebuilt. Returns the rows added. `plan`: hour_plan() of
    the same database, offers, effects and seed, drawn beforehand (the bench times the write
    alone: drawing the market's prices is the simulated world's work, not the pipeline's)."""
    hours = np.array([hour_of(hour)], dtype=np.int64)
    con = _open_simulated(db_path)
    try:
        start, recorded = _history_start(con, hour)
        if plan is None:
            plan = plan_simulation(offers, effects, seed, noise_pct, start=start)
        register_plan(con, plan)
        before = con.execute("select count(*) from observations").fetchone()[0]
        with transaction(con):
            if not recorded:
                write_truth(con, plan, effects, seed=seed, noise_pct=noise_pct, start=start,
                            days=None, every_hours=None)
            insert_hours(con, plan, hours, datetime.now(UTC), f"sim-seed-{seed}", or_ignore=True)
        return con.execute("select count(*) from observations").fetchone()[0] - before
    finally:
        con.close()


def hour_plan(db_path: str | Path, hour: datetime, offers: pd.DataFrame | Iterable[dict],
              effects: Sequence[Effect] = (), seed: int = 0, *,
              noise_pct: float = NOISE_PCT) -> Plan:
    """The plan append_hour draws the hour's prices from on a simulated database (no rows are
    written): drawn once, it can be passed to append_hour."""
    con = _open_simulated(db_path)
    try:
        start, _ = _history_start(con, hour)
    finally:
        con.close()
    return plan_simulation(offers, effects, seed, noise_pct, start=start)


def _open_simulated(db_path: str | Path) -> duckdb.DuckDBPyConnection:
    """An open of an existing simulated database, its schema ensured, refused (before anything
    is written) when it is the real one or holds data that was not simulated."""
    path = check_target(db_path)
    if not path.exists():
        raise SimulationError(f"{path}: no such database (run simulate first)")
    con = connect(path)     # one open of the file: checked before anything is written
    try:
        if not _holds_only_simulated(con):
            raise SimulationError(f"{path} holds data that was not simulated; refusing to write")
        ensure_schema(con)
    except BaseException:
        con.close()
        raise
    return con


def _history_start(con: duckdb.DuckDBPyConnection, hour: datetime) -> tuple[datetime, bool]:
    """The start of the simulated history (its scenario's, else its first hour, else `hour`)
    and whether its truth tables record it (creating them when missing)."""
    catalog = _catalog(con)
    con.execute(TRUTH_SCHEMA.replace("{catalog}", catalog))
    start = con.execute(f"select min(start_at) from {catalog}.truth.scenario").fetchall()[0][0]
    recorded = start is not None
    if not recorded:      # a database simulated before the truth tables: start where it did
        start = con.execute("select min(observed_hour) from observations").fetchall()[0][0]
    return (_start_datetime(start) if start is not None else _start_datetime(hour)), recorded


def _start_datetime(start: date | datetime | str) -> datetime:
    if isinstance(start, str):
        try:
            start = datetime.fromisoformat(start)
        except ValueError as exc:
            raise SimulationError(f"start {start!r} is not an ISO date") from exc
    if not isinstance(start, datetime):
        start = datetime(start.year, start.month, start.day)
    if start.tzinfo is None:
        start = start.replace(tzinfo=UTC)
    start = start.astimezone(UTC)
    if (start.minute, start.second, start.microsecond) != (0, 0, 0):
        raise SimulationError(f"start {start.isoformat()} is not on the hour")
    return start


def months_to_days(start: date, months: int) -> int:
    """Days from `start` to the same day `months` calendar months later."""
    year, month = divmod(start.month - 1 + months, 12)
    end_year, end_month = start.year + year, month + 1
    end_day = min(start.day, calendar.monthrange(end_year, end_month)[1])
    return (date(end_year, end_month, end_day) - start).days

