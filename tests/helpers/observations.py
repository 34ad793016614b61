"""Hand-made observations and the SQL models built over them.

`obs` is one `observations` row as normalization writes it; the region constants are places as
normalization writes them. `build` fills a DuckDB's `observations` and builds every model of
the project unchanged, in dependency order; `build_only` builds just the models some tables need.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import duckdb
import pytest

from pipelines.warehouse.sql_models import PYTHON_TABLES, load_models, run_model
from spiders.layout import SQL_DIR

EXTERNAL = PYTHON_TABLES
HOURS = {"hour": 1, "day": 24, "week": 168, "month": 730, "year": 8760}
DAY = datetime(2026, 11, 30, 9, tzinfo=UTC)
# The test clock: ages count to the day after DAY (price_reference_day()), whatever the real date,
# so an offer seen on DAY stays within the horizon of "now" (marts.cheapest_offers) for good.
TODAY = (DAY + timedelta(days=1)).date()
# A test offer's machine per whole-GPU equivalent (vcpus, memory_gib; disk not stated): one
# configuration class, as like-for-like pairs require (intermediate.int_pair_rules).
MACHINE_PER_GPU = {"vcpus": Decimal("12"), "memory_gib": Decimal("96")}
# The columns whose values tell one offer from another (hashed into offer_id).
OFFER_KEY = ("source", "vendor", "region_code", "sku", "gpu_model", "gpu_count", "gpu_fraction",
             "offer_kind", "billing_period")

# Regions as normalization writes them: (region_code, country, province_or_state, city, tier-1).
BEIJING = {"region_code": "北京", "country": "CN", "province_or_state": "Beijing",
           "city": "Beijing", "is_tier1_city": True}
SHANGHAI = {"region_code": "上海", "country": "CN", "province_or_state": "Shanghai",
            "city": "Shanghai", "is_tier1_city": True}
ULANQAB = {"region_code": "乌兰察布", "country": "CN", "province_or_state": "Inner Mongolia",
           "city": "Ulanqab", "is_tier1_city": False}
GUIAN = {"region_code": "贵安", "country": "CN", "province_or_state": "Guizhou",
         "city": "Gui'an", "is_tier1_city": False}
NANJING = {"region_code": "南京", "country": "CN", "province_or_state": "Jiangsu",
           "city": "Nanjing", "is_tier1_city": False}
FRANKFURT = {"region_code": "fra", "country": "DE", "province_or_state": "Hesse",
             "city": "Frankfurt", "is_tier1_city": False}


def us(state: str, code: str) -> dict:
    return {"region_code": code, "country": "US", "province_or_state": state, "city": None,
            "is_tier1_city": False}


def obs(price: float | str, *, offer_key: tuple[str, ...] = OFFER_KEY, **overrides) -> dict:
    """One observation: `price` is the amount as listed (CNY per billing_period for the whole
    instance); every other NOT NULL column gets a default, `overrides` set any column.
    offer_id hashes the `offer_key` columns."""
    row = {
        "observed_at": DAY,
        "source": "idc_test",
        "vendor": "Test IDC",
        "vendor_kind": "idc",
        **BEIJING,
        "gpu_model": "A100-80GB",
        "gpu_variant": "SXM",
        "gpu_count": 1,
        "gpu_fraction": Decimal("1"),
        "offer_kind": "on_demand",
        "billing_period": "hour",
        "currency": "CNY",
        "available": True,
        "crawl_id": "crawl-1",
    }
    row.update(overrides)
    row["gpu_fraction"] = Decimal(str(row["gpu_fraction"]))
    row.setdefault("vram_gb", Decimal("80") * row["gpu_fraction"])
    # the machine, per whole-GPU equivalent alike on every offer (MACHINE_PER_GPU), so that
    # like-for-like pairs match in configuration unless a test says otherwise
    gpus = row["gpu_count"] * row["gpu_fraction"]
    for column, per_gpu in MACHINE_PER_GPU.items():
        row.setdefault(column, per_gpu * gpus)
    row.setdefault("sku", f"{row['gpu_model']} {row['gpu_count']}x{row['gpu_fraction']:g} "
                          f"{row['offer_kind']} {row['billing_period']}")
    row["price_amount"] = Decimal(str(price))
    per_gpu_hour = (row["price_amount"] / HOURS[row["billing_period"]]
                    / (row["gpu_count"] * row["gpu_fraction"]))
    row.setdefault("price_per_gpu_hour_cny", round(per_gpu_hour, 6))
    row.setdefault("price_per_gpu_hour_usd", round(row["price_per_gpu_hour_cny"] / 7, 6))
    row.setdefault("fx_rate_date", row["observed_at"].date())
    row.setdefault("observed_hour", row["observed_at"].replace(minute=0, second=0, microsecond=0))
    key = "|".join(str(row[k]) for k in offer_key)
    row.setdefault("offer_id", hashlib.sha256(key.encode()).hexdigest()[:16])
    row.setdefault("url", f"https://example.test/{row['source']}")
    row.setdefault("raw_ref", f"raw/{row['offer_id']}")
    return row


def record_crawl(con: duckdb.DuckDBPyConnection, crawl_id: str, source: str,
                 opted_in: bool | None = None) -> None:
    """A passed crawl normalized now, unless `crawl_id` is there already (raw.crawls has no key
    to ignore a second insert on: pipelines/warehouse/db.py UNKEYED_HISTORY)."""
    con.execute("insert into raw.crawls (crawl_id, source, mode, passed, status, offers, "
                "normalized_at, opted_in) select $1, $2, 'replay', true, 'passed', 1, now(), $3 "
                "where $1 not in (select crawl_id from raw.crawls)", [crawl_id, source, opted_in])


def insert(con: duckdb.DuckDBPyConnection, rows: list[dict], crawl_id: str | None = None) -> None:
    """Insert the observations; with `crawl_id`, as one passed crawl normalized now (the runner
    rebuilds incrementally from crawls normalized since its last build), opted in: its rows are
    shown whatever their sources' price basis (staging.stg_shown_observations)."""
    if crawl_id:
        record_crawl(con, crawl_id, "idc_test", opted_in=True)
        rows = [{**row, "crawl_id": crawl_id} for row in rows]
    columns = list(dict.fromkeys(c for row in rows for c in row))   # a column some rows leave null
    con.executemany(f"insert into observations ({', '.join(columns)}) "
                    f"values ({', '.join('?' for _ in columns)})",
                    [[row.get(c) for c in columns] for row in rows])


def set_test_clock(con: duckdb.DuckDBPyConnection) -> None:
    """Count ages to TODAY on `con`, unless the test set another day."""
    con.execute("set variable price_reference_day = "
                "coalesce(getvariable('price_reference_day'), ?::date)", [TODAY])


def build(con: duckdb.DuckDBPyConnection, rows: list[dict]) -> duckdb.DuckDBPyConnection:
    """Insert the observations, then build every model in dependency order."""
    set_test_clock(con)
    if rows:
        insert(con, rows)
    for model in load_models(SQL_DIR, EXTERNAL):
        run_model(con, model)
    return con


def build_only(con: duckdb.DuckDBPyConnection, *tables: str, full: bool = False) -> dict:
    """Build `tables` and the models they read, in dependency order; {table: how}."""
    set_test_clock(con)
    models = load_models(SQL_DIR, EXTERNAL)
    by_table = {m.table: m for m in models}
    needed, todo = set(), list(tables)
    while todo:
        table = todo.pop()
        if table in by_table and table not in needed:
            needed.add(table)
            todo.extend(by_table[table].reads)
    return {m.table: run_model(con, m, full=full) for m in models if m.table in needed}


def records(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict]:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def approx(value, rel: float = 1e-6):
    return pytest.approx(value, rel=rel, abs=1e-9)
