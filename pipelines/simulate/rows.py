"""Building rows: every offer at every simulated hour, as numpy blocks inserted by DuckDB."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from pipelines.simulate.common import SimulationError
from pipelines.simulate.plan import Plan
from pipelines.simulate.randomness import (LEVEL_WINDOW, S_AVAIL, S_LEVEL, S_OFFSET, U64,
                                           uniform)

SQL = Path(__file__).parent / "sql"
INSERT_OBSERVATIONS = (SQL / "insert_observations.sql").read_text(encoding="utf-8")
INSERT_CRAWLS = (SQL / "insert_crawls.sql").read_text(encoding="utf-8")

def hour_of(value: datetime) -> int:
    """Epoch hours of an aware (or UTC-naive) datetime; it must be on the hour."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    seconds = int(value.timestamp())
    if seconds % 3600:
        raise SimulationError(f"{value.isoformat()} is not on the hour")
    return seconds // 3600


def _month_end_window(hours: np.ndarray, days: int) -> np.ndarray:
    """(T,) bool: the hour falls in the last `days` UTC days of its month."""
    stamp = hours.astype("datetime64[h]")
    day = stamp.astype("datetime64[D]")
    month = stamp.astype("datetime64[M]")
    first_day = month.astype("datetime64[D]")
    day_of_month = (day - first_day).astype(np.int64) + 1
    month_days = ((month + 1).astype("datetime64[D]") - first_day).astype(np.int64)
    return day_of_month > month_days - days


def _crawl_times(plan: Plan, hours: np.ndarray) -> np.ndarray:
    """(T, S) epoch seconds each source's crawl saw its offers: 1-15 minutes past the hour."""
    offset = 60 + np.floor(uniform(plan.source_keys ^ U64(S_OFFSET), hours[:, None]) * 840)
    return hours[:, None] * 3600 + offset.astype(np.int64)


def _block(plan: Plan, hours: np.ndarray) -> dict[str, np.ndarray]:
    """Every offer at every hour in `hours` (epoch hours): arrays shaped (T, N), hour-major."""
    h = hours[:, None]
    n_offers = len(plan.keys)
    # Price level: revised every knot_hours; a moving average of knot draws, so it wanders slowly
    # within +/- noise.
    knot = (h + plan.knot_phase) // plan.knot_hours
    level = np.zeros((len(hours), n_offers))
    for j in range(LEVEL_WINDOW):
        level += 2 * uniform(plan.keys ^ U64(S_LEVEL), knot - j) - 1
    level = np.clip(level * (2 / LEVEL_WINDOW), -1, 1) * plan.noise
    factor = 1 + level

    observed_s = _crawl_times(plan, hours)[:, plan.source_idx]   # each source's fetch time

    sold_out = uniform(plan.keys ^ U64(S_AVAIL),
                        (h + plan.avail_phase) // plan.avail_hours) < plan.p_unavailable
    for dip, members in plan.dips:
        window = _month_end_window(hours, dip.days)[:, None] & members
        factor = np.where(window, factor * (1 - dip.size_pct / 100), factor)
        if dip.availability:
            sold_out &= ~window
    for drop, members in plan.drops:
        after = observed_s >= int(drop.at.timestamp())
        factor = np.where(after & members, factor * (1 - drop.pct / 100), factor)

    amount = np.round(plan.base_amount * factor / plan.tick) * plan.tick
    amount = np.maximum(amount, plan.tick)
    available = np.where(plan.avail_stated, np.where(sold_out, 0, 1), -1).astype(np.int8)
    return {"hour": np.broadcast_to(h, amount.shape), "observed_s": observed_s,
            "amount": amount, "available": available}


def _chunk_frame(plan: Plan, hours: np.ndarray) -> pd.DataFrame:
    block = _block(plan, hours)
    n_offers = len(plan.keys)
    return pd.DataFrame({
        "oi": np.tile(np.arange(n_offers, dtype=np.int32), len(hours)),
        "h": block["hour"].ravel().astype(np.int64),
        "observed_s": block["observed_s"].ravel(),
        "amount": block["amount"].ravel(),
        "available": block["available"].ravel(),
    })


def register_plan(con: duckdb.DuckDBPyConnection, plan: Plan) -> None:
    counts = np.bincount(plan.source_idx, minlength=len(plan.sources))
    sources = pd.DataFrame({"si": np.arange(len(plan.sources), dtype=np.int32),
                            "source": plan.sources, "offers": counts.astype(np.int32)})
    for name, frame in (("sim_offers", plan.offers), ("sim_sources", sources)):
        con.register(f"{name}_df", frame)
        con.execute(f"create or replace temp table {name} as select * from {name}_df")
        con.unregister(f"{name}_df")


def insert_hours(con: duckdb.DuckDBPyConnection, plan: Plan, hours: np.ndarray, normalized_at: datetime,
            run_id: str, or_ignore: bool = False) -> int:
    """Observations and crawls of every source at `hours`; returns the observation rows built."""
    chunk = _chunk_frame(plan, hours)
    con.register("sim_chunk", chunk)
    con.register("sim_crawls", _crawl_frame(plan, hours))
    try:
        observations = INSERT_OBSERVATIONS
        if or_ignore:
            observations = observations.replace("insert into", "insert or ignore into")
        con.execute(observations)
        con.execute(INSERT_CRAWLS.format(or_ignore="or ignore" if or_ignore else ""),
                    [run_id, normalized_at])
    finally:
        con.unregister("sim_chunk")
        con.unregister("sim_crawls")
    return len(chunk)


def _crawl_frame(plan: Plan, hours: np.ndarray) -> pd.DataFrame:
    n_sources = len(plan.sources)
    return pd.DataFrame({
        "si": np.tile(np.arange(n_sources, dtype=np.int32), len(hours)),
        "h": np.repeat(hours, n_sources).astype(np.int64),
        "observed_s": _crawl_times(plan, hours).ravel(),
    })

