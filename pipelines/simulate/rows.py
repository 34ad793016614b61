"""Building rows: every offer at every simulated hour, as numpy blocks inserted by DuckDB."""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb
import numpy as np
import pandas as pd

from pipelines.simulate.calendar import month_end_window
from pipelines.simulate.common import SimulationError
from pipelines.simulate.index_effects import apply_index_effects
from pipelines.simulate.plan import Plan
from pipelines.simulate.randomness import (
    LEVEL_WINDOW,
    S_AVAIL,
    S_LEVEL,
    S_OFFSET,
    U64,
    uniform,
)
from pipelines.warehouse.crawl_first_days import record_crawl_first_days
from pipelines.warehouse.sql_files import sql_text

INSERT_OBSERVATIONS = sql_text(__file__, "insert_observations")
INSERT_CRAWLS = sql_text(__file__, "insert_crawls")


def hour_of(value: datetime) -> int:
    """Epoch hours of an aware (or UTC-naive) datetime; it must be on the hour."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    seconds = int(value.timestamp())
    if seconds % 3600:
        raise SimulationError(f"{value.isoformat()} is not on the hour")
    return seconds // 3600


def _local_month_end(plan: Plan, hours: np.ndarray, days: int) -> np.ndarray:
    """(T, N) bool: the hour falls in the last `days` days of the month of each offer's local
    calendar."""
    by_zone = np.stack([month_end_window(hours, days, zone) for zone in plan.zones], axis=1)
    return by_zone[:, plan.zone_idx]


def _crawl_times(plan: Plan, hours: np.ndarray) -> np.ndarray:
    """(T, S) epoch seconds each source's crawl saw its offers: 1-15 minutes past the hour."""
    offset = 60 + np.floor(uniform(plan.source_keys ^ U64(S_OFFSET), hours[:, None]) * 840)
    return hours[:, None] * 3600 + offset.astype(np.int64)


def _block(plan: Plan, hours: np.ndarray) -> dict[str, np.ndarray | None]:
    """Every offer at every hour in `hours` (epoch hours): arrays shaped (T, N), hour-major;
    `listed` (None: every offer) says which offers are listed at all (month-end churn)."""
    h = hours[:, None]
    n_offers = len(plan.keys)
    # Price level: revised every knot_hours; a moving average of knot draws, so it wanders slowly
    # within +/- noise. Offers with the same noise_key share the path.
    knot = (h + plan.knot_phase) // plan.knot_hours
    level = np.zeros((len(hours), n_offers))
    for j in range(LEVEL_WINDOW):
        level += 2 * uniform(plan.noise_keys ^ U64(S_LEVEL), knot - j) - 1
    level = np.clip(level * (2 / LEVEL_WINDOW), -1, 1) * plan.noise
    factor = 1 + level

    observed_s = _crawl_times(plan, hours)[:, plan.source_idx]   # each source's fetch time

    sold_out = uniform(plan.keys ^ U64(S_AVAIL),
                        (h + plan.avail_phase) // plan.avail_hours) < plan.p_unavailable
    windows: dict[int, np.ndarray] = {}

    def month_end(days: int) -> np.ndarray:
        if days not in windows:
            windows[days] = _local_month_end(plan, hours, days)
        return windows[days]

    for dip, members in plan.dips:
        window = month_end(dip.days) & members
        factor = np.where(window, factor * (1 - dip.size_pct / 100), factor)
        if dip.availability:
            sold_out &= ~window
    for trend, since_hour, members in plan.trends:
        elapsed = np.maximum(hours - since_hour, 0)[:, None]
        growth = (1 + trend.pct_per_30_days / 100) ** (elapsed / 720)
        factor = np.where(members, factor * growth, factor)
    for drop, members in plan.drops:
        after = observed_s >= int(drop.at.timestamp())
        factor = np.where(after & members, factor * (1 - drop.pct / 100), factor)
    cny_scale = np.ones(factor.shape)
    usd_scale = np.ones(factor.shape)
    for move, members, usd_members in plan.fx_moves:
        after = observed_s >= int(move.at.timestamp())
        cny_scale = np.where(after & members, cny_scale * (1 + move.pct / 100), cny_scale)
        usd_scale = np.where(after & usd_members, usd_scale * (1 + move.pct / 100), usd_scale)
    listed = None
    for days, members, in_window in plan.listings:
        shown = np.where(members, month_end(days) == in_window, True)
        listed = shown if listed is None else listed & shown

    factor, listed = apply_index_effects(plan.index, hours, observed_s, factor, listed)
    amount = np.round(plan.base_amount * factor / plan.tick) * plan.tick
    amount = np.maximum(amount, plan.tick)
    available = np.where(plan.avail_stated, np.where(sold_out, 0, 1), -1).astype(np.int8)
    return {"hour": np.broadcast_to(h, amount.shape), "observed_s": observed_s,
            "amount": amount, "available": available, "cny_scale": cny_scale,
            "usd_scale": usd_scale, "listed": listed}


def _chunk_frames(plan: Plan, hours: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The observation rows of `hours` and their crawls (one per source and hour, `offers` = the
    rows it holds)."""
    block = _block(plan, hours)
    n_offers = len(plan.keys)
    chunk = pd.DataFrame({
        "oi": np.tile(np.arange(n_offers, dtype=np.int32), len(hours)),
        "h": block["hour"].ravel().astype(np.int64),
        "observed_s": block["observed_s"].ravel(),
        "amount": block["amount"].ravel(),
        "available": block["available"].ravel(),
        "cny_scale": block["cny_scale"].ravel(),
        "usd_scale": block["usd_scale"].ravel(),
    })
    n_sources = len(plan.sources)
    listed = block["listed"]
    if listed is None:
        counts = np.broadcast_to(np.bincount(plan.source_idx, minlength=n_sources),
                                 (len(hours), n_sources))
    else:
        chunk = chunk[listed.ravel()].reset_index(drop=True)
        counts = np.stack([listed[:, plan.source_idx == s].sum(axis=1)
                           for s in range(n_sources)], axis=1)
    crawls = pd.DataFrame({
        "si": np.tile(np.arange(n_sources, dtype=np.int32), len(hours)),
        "h": np.repeat(hours, n_sources).astype(np.int64),
        "observed_s": _crawl_times(plan, hours).ravel(),
        "offers": counts.ravel().astype(np.int32),
    })
    return chunk, crawls


def register_plan(con: duckdb.DuckDBPyConnection, plan: Plan) -> None:
    sources = pd.DataFrame({"si": np.arange(len(plan.sources), dtype=np.int32),
                            "source": plan.sources})
    for name, frame in (("sim_offers", plan.offers), ("sim_sources", sources)):
        con.register(f"{name}_df", frame)
        con.execute(f"create or replace temp table {name} as select * from {name}_df")
        con.unregister(f"{name}_df")


def insert_hours(con: duckdb.DuckDBPyConnection, plan: Plan, hours: np.ndarray,
                 normalized_at: datetime, run_id: str, or_ignore: bool = False) -> int:
    """Observations and crawls of every source at `hours`; returns the observation rows built."""
    chunk, crawls = _chunk_frames(plan, hours)
    con.register("sim_chunk", chunk)
    con.register("sim_crawls", crawls)
    try:
        only_new = "true" if or_ignore else "false"
        con.execute(INSERT_OBSERVATIONS.format(only_new=only_new))
        con.execute(INSERT_CRAWLS.format(only_new=only_new), [run_id, normalized_at])
        # the model runner then finds the new crawls' first day without scanning the history
        record_crawl_first_days(con, datetime.fromtimestamp(int(hours.min()) * 3600, UTC),
                                normalized_at)
    finally:
        con.unregister("sim_chunk")
        con.unregister("sim_crawls")
    return len(chunk)
