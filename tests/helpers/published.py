"""A small published database for the reading commands of `gpuprices`, built without crawling:
hand-made observations, every SQL model of the project built over them, the working file copied
to data/prices.db as the pipeline publishes it; and `gpuprices` invoked in-process on it."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.warehouse.db import DUCKDB_CONFIG, ensure_schema
from tests.helpers.observations import HOURS, build, obs

SEEN = datetime(2026, 11, 30, 9, tzinfo=UTC)
CNY_PER_USD = Decimal("7.1")
BEIJING = dict(country="CN", province_or_state="Beijing", city="Beijing", is_tier1_city=True)
INNER_MONGOLIA = dict(country="CN", province_or_state="Inner Mongolia", is_tier1_city=False)
VIRGINIA = dict(country="US", province_or_state="Virginia", city=None, is_tier1_city=False)
JIANGSU = dict(country="CN", province_or_state="Jiangsu", city="Nanjing", is_tier1_city=False)


def offer(source: str, vendor: str, region_code: str, place: dict, gpu_model: str, amount: str,
          *, period: str = "hour", kind: str = "on_demand", count: int = 1,
          fraction: str = "1", currency: str = "CNY", available: bool | None = True) -> dict:
    """One observation row as normalization writes it (per-GPU-hour prices computed here)."""
    per_gpu_hour = Decimal(amount) / HOURS[period] / (count * Decimal(fraction))
    cny = per_gpu_hour * (CNY_PER_USD if currency == "USD" else 1)
    sku = f"{gpu_model} {count}x{fraction} {kind} {period}"
    offer_id = hashlib.sha256(f"{source}|{region_code}|{sku}".encode()).hexdigest()[:20]
    return obs(amount, observed_at=SEEN, source=source, vendor=vendor,
               vendor_kind="idc" if source.startswith("idc_") else "hyperscaler",
               region_code=region_code, **{"city": None, **place}, sku=sku,
               gpu_model=gpu_model, gpu_variant=None, gpu_count=count, gpu_fraction=fraction,
               vram_gb=Decimal(gpu_model.split("-")[1][:-2]) * Decimal(fraction),
               offer_kind=kind, billing_period=period, currency=currency,
               price_per_gpu_hour_cny=round(cny, 6),
               price_per_gpu_hour_usd=round(cny / CNY_PER_USD, 6), available=available,
               raw_ref=offer_id, offer_id=offer_id, crawl_id=f"{source}-crawl")


SINNET = ("idc_sinnet_bj", "光环新网 Sinnet", "北京", BEIJING)
ALIBABA = ("alibaba_cn", "阿里云 Alibaba Cloud", "cn-beijing", BEIJING)
ULANQAB = ("idc_ulanqab", "乌兰察布某IDC", "乌兰察布", {**INNER_MONGOLIA, "city": "Ulanqab"})
AUTODL = ("autodl_cn", "AutoDL", "内蒙B区", INNER_MONGOLIA)
AZURE = ("azure", "Microsoft Azure", "eastus", VIRGINIA)
NANJING = ("idc_nanjing", "南京某IDC", "南京", JIANGSU)
# scraped text is data: a vendor name that would clear the terminal and inject rich markup
HOSTILE = ("vastai", "vast.ai\x1b[2J\x1b[31m [bold]host[/bold]", "texas, us",
           dict(country="US", province_or_state="Texas", city=None, is_tier1_city=False))


def market() -> list[dict]:
    """The observations of the published database."""
    return [
        offer(*SINNET, "A100-80GB", "62"),
        offer(*SINNET, "A100-80GB", "24.50", fraction="0.25"),
        offer(*SINNET, "A100-80GB", "420", count=8),
        offer(*SINNET, "A100-80GB", "11800", period="month"),
        offer(*ALIBABA, "A100-40GB", "30"),
        offer(*ALIBABA, "A100-40GB", "8", kind="spot"),
        offer(*ULANQAB, "A100-80GB", "46"),
        offer(*ULANQAB, "A100-80GB", "8900", period="month"),
        offer(*AUTODL, "RTX4090-24GB", "45", period="day", available=False),
        offer(*AZURE, "A100-80GB", "3.673", currency="USD"),
        offer(*AZURE, "A100-80GB", "0.80", currency="USD", kind="spot"),
        offer(*AZURE, "H100-80GB", "6.98", currency="USD", available=None),
        offer(*NANJING, "H800-80GB", "45"),
        offer(*HOSTILE, "RTX4090-24GB", "0.35", currency="USD", kind="spot"),
    ]


def publish(root: Path, rows: list[dict]) -> Path:
    """<root>/prices.db published from <root>/.work/prices.db, as `feeds/prices_db` does."""
    work = root / ".work" / "prices.db"
    work.parent.mkdir(parents=True)
    with duckdb.connect(str(work), config=DUCKDB_CONFIG) as con:
        ensure_schema(con)
        build(con, rows)
        con.execute("checkpoint")
    shutil.copyfile(work, root / "prices.db")
    return root


def gpuprices(data_dir: Path, *args: str):
    """`gpuprices *args` in-process on `data_dir`; an exception other than an exit is raised."""
    result = CliRunner(env={"GPUPRICES_DATA_DIR": str(data_dir)}).invoke(main, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def as_json(data_dir: Path, *args: str) -> list[dict]:
    result = gpuprices(data_dir, "prices", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def published(data_dir: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(data_dir / "prices.db"), read_only=True) as con:
        return con.execute(sql).fetchall()
