"""Normalized offers for the simulator (pipelines/simulate/), and reading the database a
simulation wrote."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
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
