"""(h) `gpuprices backfill`: its rate on a year of a SkyPilot-format catalog (AWS every 7 hours,
1,251 commits of 60 GPU rows: 90 offers each, 112,590 in all), and the hourly run's cost (one
new crawl normalized, checked and published, then the models brought up to date, as an hourly
run does after its crawl) before and after that year is backfilled under two days of crawled
history. The catalog is made up and built with `git fast-import` in the work directory; its
columns are the real catalog's. Runs the pipeline's own steps (Dagster, in this process)."""

from __future__ import annotations

import itertools
import json
import os
import statistics
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.workshop.bench.config import say

COMMIT_HOURS = 7
# instance type, accelerator, count, on-demand USD per instance-hour
INSTANCES = (("p4d.24xlarge", "A100", 8, 32.7726), ("p4de.24xlarge", "A100-80GB", 8, 40.9657),
             ("p5.48xlarge", "H100", 8, 98.32), ("g5.xlarge", "A10G", 1, 1.006),
             ("g6.xlarge", "L4", 1, 0.8048), ("g4dn.xlarge", "T4", 1, 0.526))
REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "ap-northeast-1", "eu-central-1")
HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,"
          "SpotPrice,Region,AvailabilityZone")
ARCHIVE_START = datetime(2025, 1, 1, 3, tzinfo=UTC)
LIVE_START = datetime(2026, 1, 1, 0, 5, tzinfo=UTC)   # crawled history after the archive
LIVE_HOURS = 48
MEASURED_RUNS = 2


def catalog_text(n: int) -> str:
    """Commit n's vms.csv: every instance in every region and two zones; prices move a little
    from commit to commit (spot more, by zone)."""
    rows = [HEADER]
    for t, (instance, card, count, price) in enumerate(INSTANCES):
        for r, region in enumerate(REGIONS):
            on_demand = price * (1 + 0.01 * ((n + r) % 3))
            for z in (1, 2):
                spot = price * (0.3 + 0.01 * ((n * 7 + t + r + z) % 20))
                rows.append(f"{instance},{card},{count}.0,8.0,32.0,,{on_demand:.4f},"
                            f"{spot:.4f},{region},{region[:2]}{region[-1]}-az{z}")
    return "\n".join(rows) + "\n"


def build_catalog(path: Path, days: int) -> int:
    """A git repository of `days` of catalog commits; returns the commits."""
    commits = days * 24 // COMMIT_HOURS
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    stream = []
    for n in range(commits):
        stamp = int((ARCHIVE_START + timedelta(hours=COMMIT_HOURS * n)).timestamp())
        body = catalog_text(n).encode()
        stream.append(f"commit refs/heads/main\ncommitter b <b@example.org> {stamp} +0000\n"
                      f"data 6\nupdate\nM 100644 inline catalogs/v8/aws/vms.csv\n"
                      f"data {len(body)}\n".encode() + body + b"\n\n")
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input=b"".join(stream),
                   check=True)
    return commits


def _live_crawl(root: Path, hour: int) -> None:
    """One passing crawl of the aws spider at LIVE_START + `hour` hours, pending."""
    from pipelines.backfill.load import connect
    from spiders.registry import spider_class

    spider = spider_class("aws")
    when = (LIVE_START + timedelta(hours=hour)).isoformat()
    crawl_id = f"aws-{LIVE_START + timedelta(hours=hour):%Y%m%dT%H%M%S}-bench"
    items = [{"source": "aws", "vendor": spider.vendor, "vendor_kind": spider.vendor_kind,
              "sku": instance, "gpu_text": card, "gpu_count": count, "region_text": region,
              "offer_kind": "on_demand", "price_amount": f"{price:.4f}", "currency": "USD",
              "billing_period": "hour", "url": "https://aws.amazon.com/", "raw_ref": "0" * 64,
              "observed_at": when}
             for instance, card, count, price in INSTANCES for region in REGIONS]
    con = connect(root)
    try:
        con.execute("insert into raw.crawls (crawl_id, run_id, source, mode, started_at, "
                    "finished_at, passed, status, offers) values (?, 'bench', 'aws', 'live', ?, "
                    "?, true, 'passed', ?)", [crawl_id, when, when, len(items)])
        con.executemany("insert into raw.offers values (?, ?, 'aws', ?)",
                        [[crawl_id, n, json.dumps(item)] for n, item in enumerate(items)])
    finally:
        con.close()


def _hourly_runs(root: Path, hours: Iterator[int], runs: int = MEASURED_RUNS) -> list[float]:
    """Seconds of each hourly run: the next hour's crawl published, the models updated."""
    from pipelines.backfill.publish import MODEL_GROUPS, build_after, publish_pending

    seconds = []
    for _ in range(runs):
        _live_crawl(root, next(hours))
        started = time.perf_counter()
        ok, message = publish_pending(root)
        ok = ok and build_after(root, MODEL_GROUPS)[0]
        seconds.append(time.perf_counter() - started)
        if not ok:
            raise RuntimeError(f"the bench's hourly run failed: {message}")
    return seconds


def backfill_bench(work: Path, days: int = 365) -> dict[str, Any]:
    """The backfill's rate and the hourly run's cost before and after it."""
    from pipelines.backfill.load import backfill
    from pipelines.backfill.publish import MODEL_GROUPS, build_after, publish_pending

    saved = os.environ.get("GPUPRICES_DATA_DIR")
    root = work / "data"
    try:
        say(f"backfill: building a {days}-day catalog")
        commits = build_catalog(work / "catalog", days)
        say(f"backfill: {LIVE_HOURS} hours of crawled history")
        for hour in range(LIVE_HOURS):
            _live_crawl(root, hour)
        publish_pending(root)
        build_after(root, MODEL_GROUPS)
        hours = itertools.count(LIVE_HOURS)
        _hourly_runs(root, hours, 1)          # warm-up: Great Expectations' first context
        before = _hourly_runs(root, hours)
        say(f"backfill: {commits} commits")
        stats = backfill("skypilot-catalog", work / "catalog", lambda: publish_pending(root),
                         root=root)
        started = time.perf_counter()
        ok, message = build_after(root, MODEL_GROUPS)
        rebuild = time.perf_counter() - started
        after = _hourly_runs(root, hours)
    finally:
        if saved is None:
            os.environ.pop("GPUPRICES_DATA_DIR", None)
        else:
            os.environ["GPUPRICES_DATA_DIR"] = saved
    return {"days": days, "commits": stats.read, "offers": stats.offers,
            "rows": stats.rows_added, "quarantined": stats.quarantined,
            "seconds": stats.seconds, "commits_per_second": stats.read / stats.seconds,
            "rows_per_second": stats.rows_added / stats.seconds,
            "models_after_seconds": rebuild, "models_after_ok": ok, "models_after_error": message,
            "hourly_before_seconds": statistics.median(before), "hourly_before_runs": before,
            "hourly_after_seconds": statistics.median(after), "hourly_after_runs": after}


def print_backfill(console, figures: dict[str, Any]) -> None:
    """(h) in the printed report."""
    f = figures
    console.print(
        f"(h) gpuprices backfill, {f['days']} days of a SkyPilot-format catalog: {f['commits']} "
        f"commits, {f['rows']:,} rows in {f['seconds']:.1f} s ({f['commits_per_second']:.1f} "
        f"commits/s, {f['rows_per_second']:,.0f} rows/s); models brought up to date after it "
        f"in {f['models_after_seconds']:.1f} s")
    console.print(
        f"    the hourly run (a crawl published, the models updated): "
        f"{f['hourly_before_seconds']:.2f} s before, {f['hourly_after_seconds']:.2f} s after "
        f"(median of {len(f['hourly_after_runs'])}; "
        f"{f['hourly_after_seconds'] / f['hourly_before_seconds']:.2f}x)")
