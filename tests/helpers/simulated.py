"""Normalized offers for the simulator (pipelines/simulate/), and reading the database a
simulation wrote."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from functools import cached_property
from pathlib import Path

import duckdb
import pandas as pd

from spiders.parsing.currencies import fx_rate
from spiders.parsing.prices import HOURS_PER_PERIOD

FX_DAY = date(2026, 5, 29)


def make_offer(offer_id: str, source: str, *, country: str = "CN", currency: str = "CNY",
               amount: str = "10.00", period: str = "hour", gpu_count: int = 1,
               fraction: str = "1", province: str | None = "Beijing", tier1: bool = True,
               vendor: str | None = None, kind: str = "gpu_cloud", offer_kind: str = "on_demand",
               available: bool | None = True, gpu_model: str = "A100-80GB") -> dict:
    """One normalized offer, its per-GPU-hour prices computed as the normalizer does."""
    units = Decimal(gpu_count) * Decimal(fraction)
    hours = Decimal(str(HOURS_PER_PERIOD[period]))

    def per_gpu(to: str) -> Decimal:
        rate = fx_rate(currency, to, FX_DAY).rate
        return round(Decimal(amount) / (hours * units) * rate, 6)

    return {
        "source": source, "vendor": vendor or source, "vendor_kind": kind, "region_code": "r1",
        "country": country, "province_or_state": province, "city": province,
        "is_tier1_city": tier1, "sku": f"sku-{offer_id}", "gpu_model": gpu_model,
        "gpu_variant": "SXM", "gpu_count": gpu_count, "gpu_fraction": Decimal(fraction),
        "vram_gb": Decimal("80"), "offer_kind": offer_kind, "billing_period": period,
        "price_amount": Decimal(amount), "currency": currency,
        "price_per_gpu_hour_cny": per_gpu("CNY"), "price_per_gpu_hour_usd": per_gpu("USD"),
        "fx_rate_date": FX_DAY, "available": available, "url": "https://example.test",
        "raw_ref": "simulated", "offer_id": offer_id,
    }


def query(path: Path, sql: str, params=None) -> pd.DataFrame:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql, params or []).df()
    finally:
        con.close()



@dataclass(frozen=True)
class SimulatedHours:
    """A simulated history of a few offers (`days` days from `start`), and the hours after it as
    an hourly run adds them. A test module sets `HOURS = SimulatedHours(...)` and gets the
    `simulated` and `work` fixtures (tests/pipelines/conftest.py)."""
    start: datetime
    days: int
    sources: tuple[str, ...]
    seed: int
    every_hours: int

    @cached_property
    def offers(self) -> pd.DataFrame:
        from pipelines.simulate import load_offers

        return load_offers(sources=list(self.sources))

    def hour(self, n: int) -> datetime:
        return self.start + timedelta(days=self.days, hours=n)

    def write(self, path: Path) -> Path:
        from pipelines.simulate import simulate

        simulate(path, offers=self.offers, start=self.start, days=self.days, seed=self.seed,
                 every_hours=self.every_hours)
        return path

    def land(self, work: Path, n: int) -> None:
        """Hour n's crawls land and no model is built."""
        from pipelines.simulate import append_hour

        append_hour(work, self.hour(n), self.offers, seed=self.seed)

    def update(self, work: Path, n: int, full: bool = False) -> None:
        """The hourly run: hour n's crawls land, every model is brought up to date (or rebuilt
        from scratch: `full`), the working database is checkpointed."""
        from pipelines.simulate import DUCKDB_CONFIG
        from pipelines.warehouse.db import ensure_schema, transaction
        from pipelines.warehouse.sql_models import load_models, run_model
        from spiders.layout import SQL_DIR

        self.land(work, n)
        with duckdb.connect(str(work), config=DUCKDB_CONFIG) as con:
            ensure_schema(con)
            for model in load_models(SQL_DIR):
                with transaction(con):
                    run_model(con, model, full=full)
            con.execute("checkpoint")
