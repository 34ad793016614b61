"""The offers a simulation starts from: an existing database's latest prices, or the bundled
snapshots crawled offline and normalized by the real code; optionally cloned for volume."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from pipelines.simulate.common import (
    CLONE_JITTER_PCT,
    OFFER_COLUMNS,
    OPTIONAL_COLUMNS,
    SimulationError,
)
from pipelines.simulate.randomness import offer_keys, uniform
from pipelines.warehouse.sql_files import sql_text


def offers_from_db(db_path: str | Path, sources: Sequence[str] | None = None) -> pd.DataFrame:
    """The latest offers of an existing gpuprices database (`marts.latest_prices`), read-only."""
    path = Path(db_path)
    if not path.exists():
        raise SimulationError(f"{path}: no such database")
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        raise SimulationError(f"{path}: cannot open read-only ({exc})") from exc
    try:
        stored = {name for (name,) in con.execute(
            sql_text(__file__, "latest_prices_columns")).fetchall()}
        # a database from before the machine's specs lacks them: null, as for unstated specs
        columns = [c if c in stored or c not in OPTIONAL_COLUMNS else f"null as {c}"
                   for c in OFFER_COLUMNS if c != "raw_ref"]
        query = f"select {', '.join(columns)} from marts.latest_prices order by source, offer_id"
        df = con.execute(query).df()
    except duckdb.CatalogException as exc:
        raise SimulationError(f"{path}: no marts.latest_prices (run `gpuprices run` first)"
                              ) from exc
    finally:
        con.close()
    df["raw_ref"] = "simulated"
    return _select_sources(df, sources)


def offers_from_snapshots(sources: Sequence[str] | None = None, *,
                          on_source: Callable[[str, str, int], None] | None = None
                          ) -> pd.DataFrame:
    """Crawl the bundled snapshots offline (replay mode, the real spiders, in the shared crawl
    processes of `gpuprices run`) and normalize each offer with the real normalizer; quarantined
    offers are skipped, an offer seen twice is kept once. `on_source(source, status, offers)` is
    called for each source once the crawl has ended (status "passed", or "failed: <why>" /
    "skipped: <why>"; such a source contributes no offer)."""
    import json

    from pipelines.normalize import Quarantined, normalize_offer
    from pipelines.resources import CrawlerResource
    from spiders.registry import source_names

    known = source_names()
    wanted = list(sources) if sources else known
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        raise SimulationError(f"unknown source(s) {', '.join(unknown)}; known: {', '.join(known)}")
    rows: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="gpuprices-sim-") as tmp:
        # every snapshot, opt-in ones too: only its offers' shapes are taken, and every price of a
        # simulated database is simulated and says so (price_basis 'simulated')
        crawler = CrawlerResource(mode="replay", data_dir=tmp, opt_in=["all"])
        results = crawler.crawl_many({source: f"sim-offers-{source}" for source in wanted})
        for source in wanted:
            result = results[source]
            kept: list[dict] = []
            if result.passed and result.items_path.exists():
                seen = set()
                for line in result.items_path.read_text(encoding="utf-8").splitlines():
                    try:
                        row = normalize_offer(json.loads(line))
                    except Quarantined:
                        continue
                    if row["offer_id"] not in seen:
                        seen.add(row["offer_id"])
                        kept.append(row)
            rows[source] = kept
            if on_source:
                status = result.status
                if result.failures:
                    status += ": " + "; ".join(result.failures)[:300]
                on_source(source, status, len(kept))
    flat = [r for s in wanted for r in rows.get(s, [])]
    if not flat:
        raise SimulationError("no offer could be normalized from the snapshots of "
                              f"{', '.join(wanted)}")
    df = pd.DataFrame(flat)
    df["raw_ref"] = "simulated"
    return df[list(OFFER_COLUMNS)]


def scale_offers(offers: pd.DataFrame, scale: int, seed: int = 0) -> pd.DataFrame:
    """Each offer plus `scale - 1` synthetic clones (sku and offer_id suffixed `#k`), each clone's
    price within +/- CLONE_JITTER_PCT % of the original (seeded): volume for benchmarks."""
    if scale < 1:
        raise SimulationError(f"scale must be at least 1, got {scale}")
    offers = as_frame(offers)
    if scale == 1:
        return offers
    copies = [offers]
    for k in range(1, scale):
        clone = offers.copy()
        clone["sku"] = clone["sku"] + f"#{k}"
        clone["offer_id"] = clone["offer_id"] + f"#{k}"
        keys = offer_keys(clone["offer_id"], seed)
        jitter = 1 + CLONE_JITTER_PCT / 100 * (2 * uniform(keys, np.uint64(0xC10E)) - 1)
        for col in ("price_amount", "price_per_gpu_hour_cny", "price_per_gpu_hour_usd"):
            clone[col] = [Decimal(str(round(float(v) * j, 6)))
                          for v, j in zip(clone[col], jitter, strict=True)]
        copies.append(clone)
    return pd.concat(copies, ignore_index=True)


def load_offers(*, offers_from: str | Path | None = None, sources: Sequence[str] | None = None,
                scale: int = 1, seed: int = 0,
                on_source: Callable[[str, str, int], None] | None = None) -> pd.DataFrame:
    """The offers a simulation starts from: an existing database's latest prices when
    `offers_from` is given, else the bundled snapshots; restricted to `sources`, scaled."""
    if offers_from is not None:
        df = offers_from_db(offers_from, sources)
    else:
        df = offers_from_snapshots(sources, on_source=on_source)
    return scale_offers(df, scale, seed)


def _select_sources(df: pd.DataFrame, sources: Sequence[str] | None) -> pd.DataFrame:
    if not sources:
        return df
    unknown = sorted(set(sources) - set(df["source"]))
    if unknown:
        raise SimulationError(f"no offers of source(s) {', '.join(unknown)}; the offers have: "
                              f"{', '.join(sorted(set(df['source'])))}")
    return df[df["source"].isin(list(sources))].reset_index(drop=True)


def as_frame(offers: pd.DataFrame | Iterable[dict]) -> pd.DataFrame:
    df = offers.copy() if isinstance(offers, pd.DataFrame) else pd.DataFrame(list(offers))
    if df.empty:
        raise SimulationError("no offers to simulate")
    if "raw_ref" not in df:
        df["raw_ref"] = "simulated"
    for column in OPTIONAL_COLUMNS:
        if column not in df:
            df[column] = None
    missing = [c for c in OFFER_COLUMNS if c not in df]
    if missing:
        raise SimulationError(f"offers lack column(s): {', '.join(missing)}")
    df = df[list(OFFER_COLUMNS)].reset_index(drop=True)
    # Every price of a simulation is simulated: a template's offers (no real operator behind them,
    # left out of the signals of real data) stand in for an operator there, as every bundled offer
    # stands in for the market, so they count like a direct source's.
    df["reaches_via"] = df["reaches_via"].where(df["reaches_via"] != "template", None)
    duplicated = df["offer_id"].duplicated()
    if duplicated.any():
        df = df[~duplicated].reset_index(drop=True)   # one offer, one series (like the pipeline)
    return df

