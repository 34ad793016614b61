"""Small hand-made price histories for the alert tests: observations landed as the loader lands
them (a raw.crawls row per crawl), every SQL model built over them, rules and the outbox."""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime, timedelta

import duckdb

import pipelines.alerts as al
from pipelines.warehouse.sql_models import load_models, run_model
from spiders.layout import REPO_ROOT, SQL_DIR
from tests.helpers import observations
from tests.helpers.observations import EXTERNAL

DAY1 = datetime(2026, 11, 20, 9, tzinfo=UTC)
NO_BACKOFF = {"delivery": {"attempts": 3, "backoff_seconds": 0.5}}
# An alert history's offers differ by source, region, SKU, kind and billing period.
OFFER_KEY = ("source", "region_code", "sku", "offer_kind", "billing_period")


def obs(price: float, day: int = 0, **overrides) -> dict:
    """One observation `day` days after DAY1: `price` is CNY per billing_period as listed; its
    crawl is the source's crawl of that hour."""
    row = {"observed_at": DAY1 + timedelta(days=day), "sku": "a100-80g-1x", **overrides}
    source = row.get("source", "idc_test")
    row.setdefault("crawl_id", f"{source}-{row['observed_at']:%Y%m%d%H}")
    row.setdefault("url", f"https://{source}.example.test/prices")
    return observations.obs(price, offer_key=OFFER_KEY, **row)


def load(con: duckdb.DuckDBPyConnection, rows: list[dict]) -> None:
    """Land observations as the pipeline does (a raw.crawls row per crawl, normalized now), then
    build every SQL model in dependency order (incremental models incrementally)."""
    observations.insert(con, rows)
    for crawl_id, source in {(r["crawl_id"], r["source"]) for r in rows}:
        observations.record_crawl(con, crawl_id, source)
    for model in models():
        run_model(con, model)


ALERTS_CODE = REPO_ROOT / "pipelines" / "alerts"
MODEL_NAME = re.compile(r"\b(?:staging|intermediate|marts)\.\w+")


@functools.cache
def models():
    """The models the alerts read (any model named in pipelines/alerts/) and the models those are
    built from, in build order: the others (the index, the advisor's, the regional marts) only
    cost each `load` their build. Parsed once: sqlglot is the slow part."""
    every = load_models(SQL_DIR, EXTERNAL)
    by_table = {model.table: model for model in every}
    named = {name for path in ALERTS_CODE.rglob("*") if path.suffix in (".py", ".sql")
             for name in MODEL_NAME.findall(path.read_text(encoding="utf-8"))}
    needed, todo = set(), [name for name in named if name in by_table]
    while todo:
        table = todo.pop()
        if table not in needed:
            needed.add(table)
            todo += [read for read in by_table[table].reads if read in by_table]
    return [model for model in every if model.table in needed]


def rules(**sections) -> al.AlertRules:
    """Only the drop rule (10 %) unless `sections` switch others on; tiny backoff."""
    return al.parse_rules({"drop": {"min_drop_pct": 10}, "new_low": {"enabled": False},
                           "month_end_dip": {"enabled": False}, **NO_BACKOFF, **sections},
                          "test rules")


def outbox(con: duckdb.DuckDBPyConnection, rule: str | None = None) -> list[dict]:
    cursor = con.execute("select * from alerts.outbox where ? is null or rule = ? "
                         "order by created_at, alert_key", [rule, rule])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def channels(*urls: str) -> list[al.Channel]:
    return al.load_channels({al.NOTIFY_URLS_ENV: " ".join(urls)})

