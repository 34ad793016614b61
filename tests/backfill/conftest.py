"""Archives of the public repositories' shapes, backfilled once per test session (for all its
xdist workers: tests/helpers/shared.py) into a data directory that already holds crawled rows (a
live aws crawl inside the archives' months and one after them): the history lands before existing
rows, as a backfill of a running install does. Tests read both; one that writes works on a copy."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest

from pipelines.backfill.load import backfill, connect
from pipelines.backfill.publish import MODEL_GROUPS, build_after, publish_pending
from spiders.registry import spider_class
from tests.backfill.archive_repos import (
    aws_csv,
    build_repo,
    cloud_gpus_json,
    full_stack_csv,
    gcp_csv,
    lambda_csv,
    utc,
)
from tests.helpers.shared import made_once, session_root

CATALOG_START = utc(2025, 1, 3, 2)
CATALOG_COMMITS = 300                      # every 7 hours: to 2025-03-31
CURATED_START = utc(2025, 1, 1, 9)
CURATED_DAYS = 89                          # daily: to 2025-03-30
LIVE_TWIN_AT = "2025-02-10T12:30:00+00:00"     # a live aws crawl on a day the catalog covers
LIVE_LATER_AT = "2025-04-10T12:30:00+00:00"    # and one after the archives end


def catalog_commits():
    for n in range(CATALOG_COMMITS):
        files = {"catalogs/v8/aws/vms.csv": aws_csv(32.77 + (n % 5) / 100, 10 + (n % 7) / 10)}
        if n % 3 == 0:
            files["catalogs/v8/gcp/vms.csv"] = gcp_csv(0.73948, 2.93 + (n % 4) / 100)
        if n % 6 == 0:
            files["catalogs/v8/lambda/vms.csv"] = lambda_csv(2.49 + (n // 6 % 2) / 10)
        yield CATALOG_START + timedelta(hours=7 * n), files


def cloud_gpus_commits():
    for n in range(CURATED_DAYS):
        prices = {"Amazon AWS": 5.12 - (n % 9) / 100, "Lambda Labs": 1.79 + (n % 3) / 100,
                  "TensorDock": 1.50 + (n % 11) / 100}
        yield CURATED_START + timedelta(days=n), {"cloud_gpu.json": cloud_gpus_json(prices)}


def full_stack_commits():
    for n in range(CURATED_DAYS):
        rows = [("AWS", "A100 (80 GB)", 8, 40.97 - (n % 5) / 10, None, "p4de.24xlarge"),
                ("GCP", "A100 (80 GB)", 1, 5.07 + (n % 4) / 100, 1.57, "a2-ultragpu-1g")]
        yield CURATED_START + timedelta(days=n, hours=3), {
            "docs/cloud-gpus/cloud-gpus.csv": full_stack_csv(rows)}


def live_aws_item(observed_at: str, price: str) -> dict:
    spider = spider_class("aws")
    return {"source": "aws", "vendor": spider.vendor, "vendor_kind": spider.vendor_kind,
            "sku": "p4d.24xlarge", "gpu_text": "A100", "gpu_count": 8,
            "region_text": "us-east-1", "offer_kind": "on_demand", "price_amount": price,
            "currency": "USD", "billing_period": "hour", "url": "https://aws.amazon.com/",
            "raw_ref": "0" * 64, "observed_at": observed_at}


def load_live_crawl(root: Path, crawl_id: str, items: list[dict]) -> None:
    """A passing crawl of the live aws spider, as the ingest step leaves it."""
    con = connect(root)
    try:
        con.execute("insert into raw.crawls (crawl_id, run_id, source, mode, started_at, "
                    "finished_at, passed, status, offers) values (?, 'r', 'aws', 'live', ?, ?, "
                    "true, 'passed', ?)", [crawl_id, items[0]["observed_at"],
                                           items[0]["observed_at"], len(items)])
        for n, item in enumerate(items):
            con.execute("insert into raw.offers values (?, ?, 'aws', ?)",
                        [crawl_id, n, json.dumps(item)])
    finally:
        con.close()


def _build_archives(base: Path) -> dict[str, Path]:
    return {"skypilot-catalog": build_repo(base / "skypilot-catalog", catalog_commits()),
            "cloud-gpus": build_repo(base / "cloud-gpus", cloud_gpus_commits()),
            "full-stack": build_repo(base / "full-stack", full_stack_commits())}


@pytest.fixture(scope="session")
def archives(tmp_path_factory) -> dict[str, Path]:
    """The three archives' git repositories: read, never written to."""
    return made_once(session_root(tmp_path_factory) / "archives", _build_archives)


@pytest.fixture(scope="session")
def backfilled(tmp_path_factory, archives):
    """(data dir, {archive: Stats}) after the live crawls, then every archive, were loaded and
    the models built after each: read, never written to (copy it to write)."""
    def load(root: Path) -> tuple[Path, dict]:
        root = root / "data"
        load_live_crawl(root, "aws-20250210T123000-live",
                        [live_aws_item(LIVE_TWIN_AT, "32.7726")])
        load_live_crawl(root, "aws-20250410T123000-live",
                        [live_aws_item(LIVE_LATER_AT, "32.7726")])
        assert publish_pending(root) == (True, "")
        assert build_after(root, MODEL_GROUPS)[0]
        stats = {}
        for name, repo in archives.items():
            started = time.perf_counter()
            stats[name] = backfill(name, repo, lambda: publish_pending(root), root=root,
                                   chunk_offers=1500)
            print(f"{name}: {time.perf_counter() - started:.1f} s")
        ok, message = build_after(root, MODEL_GROUPS)   # the report and feeds: not tested here
        assert ok, message
        return root, stats
    return made_once(session_root(tmp_path_factory) / "backfilled", load)


def read(root: Path, sql: str, params=None) -> list[tuple]:
    from spiders.layout import work_db_path

    con = duckdb.connect(str(work_db_path(root)), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()
