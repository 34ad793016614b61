"""A few days of a small market, with hostile scraped values, for the report tests: built into
a DuckDB file the way the pipeline builds it (schema, observations, every SQL model), and the
report built from it over a read-only connection."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import duckdb

from pipelines.report import build_report
from pipelines.warehouse.db import ensure_schema
from tests.helpers import observations
from tests.helpers.observations import GUIAN, ULANQAB

LAST_DAY = datetime(2026, 11, 30, 9, tzinfo=UTC)

# Scraped text an attacker (or a broken page) could put in a vendor's listing.
HOSTILE = {
    "script": "<script>alert(1)</script>",
    "img": '"><img src=x onerror=alert(1)>',
    "sql": "'; drop table observations; --",
    "controls": "RTX\x07\x1b[31m4090\x08 bell\u202eevil",
    "huge": "A" * 1_000_000,
}
HOSTILE_URL = "javascript:alert(1)"

VIRGINIA = observations.us("Virginia", "us-east-1")
FRANKFURT = {"region_code": "eu-central-1", "country": "DE", "province_or_state": "Hesse",
             "city": "Frankfurt", "is_tier1_city": False}


def obs(price: float | str, day: datetime = LAST_DAY, **overrides) -> dict:
    """One observation on `day`: `price` is the listed CNY amount per billing_period for the
    instance."""
    return observations.obs(price, observed_at=day,
                            **{"url": "https://idc.example/prices", **overrides})


def market(day: datetime, drift: float = 0.0) -> list[dict]:
    """One day of a small market: whole cards, slices, spot, servers and monthly packages in
    Beijing, Inner Mongolia, Guizhou and the US. H800 is listed monthly only (no hourly chart)."""
    cloud = {"source": "cloud_test", "vendor": "Test Cloud", "vendor_kind": "hyperscaler",
             **VIRGINIA, "url": "https://cloud.example/pricing"}
    return [
        obs(60 - drift, day),                                          # A100 Beijing: holds 50-80
        obs(20, day, gpu_fraction=0.25, sku="A100 MIG 2g.20gb"),       # a quarter slice
        obs(45, day, **ULANQAB, vendor="Steppe IDC", source="idc_steppe"),
        obs(44 + drift, day, **GUIAN, vendor="Karst IDC", source="idc_karst"),
        obs(400, day, gpu_count=8, sku="A100 8-GPU server"),
        obs(9000, day, billing_period="month"),
        obs(18, day, **cloud),
        obs(4.5, day, **cloud, offer_kind="spot"),                     # 25 %: not ~20 %
        obs(90, day, gpu_model="H100-80GB"),
        obs(30, day, gpu_model="H100-80GB", **cloud),
        obs(9, day, gpu_model="H100-80GB", **cloud, offer_kind="spot"),
        obs(30000, day, gpu_model="H800-80GB", billing_period="month", **GUIAN,
            vendor="Karst IDC", source="idc_karst"),
        obs(2.2, day, gpu_model="RTX4090-24GB", vram_gb=Decimal(24)),
        obs(16, day, gpu_model="RTX4090-24GB", vram_gb=Decimal(24), gpu_count=8,
            sku="4090 x8"),
        obs(1.1, day, gpu_model="RTX4090-24GB", vram_gb=Decimal(24), **cloud,
            offer_kind="spot"),
        obs(1.6, day, gpu_model="RTX4090-24GB", vram_gb=Decimal(24), **cloud),
    ]


def hostile_offers(day: datetime) -> list[dict]:
    """Each hostile value on the cheapest A100-80GB offer of its kind and billing period
    anywhere, so the page's first cheapest-offers table (and the screenshot) shows it."""
    de = {**FRANKFURT, "source": "market_test", "vendor": "Market", "vendor_kind": "marketplace"}
    return [
        obs(15, day, **{**de, "vendor": HOSTILE["script"]}, url=HOSTILE_URL),
        obs(480, day, **de, billing_period="day", sku=HOSTILE["img"]),
        obs(3000, day, **{**de, "region_code": HOSTILE["sql"]}, billing_period="week"),
        obs(8000, day, **de, billing_period="month", sku=HOSTILE["controls"]),
        obs(4, day, **de, offer_kind="spot", sku=HOSTILE["huge"]),
    ]


def build_database(path: Path, rows: list[dict]) -> Path:
    """The pipeline's tables and every SQL model over `rows`, in a DuckDB file."""
    with duckdb.connect(str(path)) as con:
        ensure_schema(con)
        observations.build(con, rows)
    return path


def build_page(db: Path, out: Path):
    """The report from a read-only connection: building it must not need to write."""
    with duckdb.connect(str(db), read_only=True) as con:
        return build_report(con, out)
