"""(a) Crawl throughput over the replay server: real `scrapy runspider` subprocesses with the
project's settings, over many URL variants of one recorded page per kind of crawl, politely and
at the engine's ceiling."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spiders.layout import REPO_ROOT, SNAPSHOT_DIR, crawl_verdict_path
from spiders.settings import LIVE_AUTOTHROTTLE_START_DELAY
from tests.workshop.bench.config import say

# (a): the recorded pages each kind of crawl requests many times over, as URL variants.
CRAWL_KINDS: dict[str, dict[str, Any]] = {
    "html": {"source": "idc_sinnet_bj", "label": "static HTML table (Sinnet IDC page)",
             "url": "https://www.sinnet.com.cn/gpu/price.html?bench={n}",
             "file": "gpu_price.html", "content_type": "text/html; charset=utf-8"},
    # the zone answer alone (plain_start: without the region list the spider asks for first)
    "json": {"source": "tencent_cn", "label": "JSON API (Tencent zone price JSON)",
             "url": "https://workbench.cloud.tencent.com/cgi/api?i=cvm/"
                    "DescribeZoneInstanceConfigInfos&uin=&region=ap-beijing&bench={n}",
             "file": "zone_ap-beijing-6.json", "content_type": "application/json; charset=utf-8",
             "plain_start": True},
    # gcp's keyless page, rendered in Chromium (its tables in the recorded markup: no XHR); its
    # own start asks for the one page URL, so plain_start GETs the variants (still rendered)
    "playwright": {"source": "gcp", "label": "Chromium page (Google Cloud GPU pricing page)",
                   "url": "https://cloud.google.com/compute/gpus-pricing?bench={n}",
                   "file": "gpus_pricing.html", "content_type": "text/html; charset=utf-8",
                   "plain_start": True},
}
# The polite default is the project's settings as a live crawl has them (AutoThrottle on from its
# live start delay, each source's max_concurrency of 4, 2 per domain, Playwright 4 pages per
# context). The ceiling lifts every brake: all of a kind's URLs are on one vendor host (one
# download slot), so the per-domain cap is lifted too, else it alone would hold the crawl at 2
# requests in flight.
CRAWL_MODES: dict[str, list[str]] = {
    "polite": [f"AUTOTHROTTLE_START_DELAY={LIVE_AUTOTHROTTLE_START_DELAY}"],   # as live
    "ceiling": ["AUTOTHROTTLE_ENABLED=False", "CONCURRENT_REQUESTS=16",
                "CONCURRENT_REQUESTS_PER_DOMAIN=16", "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT=16"],
}

SPIDER_TEMPLATE = '''\
"""A benchmark spider (written by tests.workshop.bench): {source} over many URL variants."""
import json
from datetime import UTC, datetime
from time import monotonic

from spiders.registry import spider_class

Base = spider_class({source!r})


class BenchSpider(Base):
    name = {name!r}
    start_urls = {urls!r}
{start}
    def parse(self, response, **kwargs):
        now = monotonic()
        self.bench_first = getattr(self, "bench_first", now)
        self.bench_last = now
        self.bench_pages = getattr(self, "bench_pages", 0) + 1
        yield from super().parse(response, **kwargs)

    def closed(self, reason):
        # Timed from the spider's opening (browser start included) to its closing.
        stats = self.crawler.stats.get_stats()
        first, last = getattr(self, "bench_first", None), getattr(self, "bench_last", None)
        figures = {{
            "reason": reason,
            "pages": getattr(self, "bench_pages", 0),
            "responses": stats.get("response_received_count", 0),
            "items": stats.get("item_scraped_count", 0),
            "elapsed_seconds": (datetime.now(UTC) - stats["start_time"]).total_seconds(),
            "first_to_last_page_seconds": (last - first) if first is not None else None,
        }}
        with open(self.settings.get("BENCH_STATS_FILE"), "w", encoding="utf-8") as fh:
            json.dump(figures, fh)
'''

# A GET of every start URL, for a source whose own start asks for something else first.
PLAIN_START = '''
    async def start(self):
        for url in self.start_urls:
            yield self.request(url)
'''


def build_crawl_snapshots(root: Path, pages: dict[str, int]) -> Path:
    """A snapshot directory whose manifests map `pages[kind]` URL variants to one recorded page
    per kind. Files are referenced in place."""
    snapshots = root / "snapshots"
    for kind, count in pages.items():
        spec = CRAWL_KINDS[kind]
        source_dir = SNAPSHOT_DIR / spec["source"]
        entries = [{"method": "GET", "url": spec["url"].format(n=n),
                    "file": str(source_dir / spec["file"]), "content_type": spec["content_type"]}
                   for n in range(count)]
        manifest = {"source": f"bench_{kind}", "captured_at": "2026-01-01T00:00:00Z",
                    "entries": entries}
        (snapshots / f"bench_{kind}").mkdir(parents=True, exist_ok=True)
        (snapshots / f"bench_{kind}" / "manifest.json").write_text(json.dumps(manifest, indent=1),
                                                                    encoding="utf-8")
    return snapshots


def crawl_once(root: Path, replay_url: str, kind: str, count: int, mode: str) -> dict[str, Any]:
    """One real `scrapy runspider` subprocess (the project's settings) over `count` variants."""
    spec = CRAWL_KINDS[kind]
    name = f"bench_{kind}_{mode}"
    module = root / "spiders" / f"{name}.py"
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text(SPIDER_TEMPLATE.format(
        source=spec["source"], name=name, urls=[spec["url"].format(n=n) for n in range(count)],
        start=PLAIN_START if spec.get("plain_start") else ""), encoding="utf-8")
    data = root / "data"
    stats_file = root / f"{name}.stats.json"
    crawl_id = f"bench-{mode}"
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "spiders.settings",
           "GPUPRICES_DATA_DIR": str(data), "GPUPRICES_REPLAY_URL": replay_url}
    cmd = [sys.executable, "-m", "scrapy", "runspider", str(module), "-a", f"crawl_id={crawl_id}",
           "-O", f"{root / name}.jsonl:jsonlines", "-s", "LOG_LEVEL=INFO",
           "-s", f"BENCH_STATS_FILE={stats_file}"]
    for setting in CRAWL_MODES[mode]:
        cmd += ["-s", setting]
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=1800)
    wall = time.perf_counter() - started
    result: dict[str, Any] = {"kind": kind, "label": spec["label"], "mode": mode,
                              "settings": CRAWL_MODES[mode] or ["project defaults"],
                              "requested_pages": count, "wall_seconds": round(wall, 3),
                              "exit_code": proc.returncode}
    verdict_path = crawl_verdict_path(name, crawl_id, data)
    if verdict_path.exists():
        verdict = json.loads(verdict_path.read_text(encoding="utf-8"))
        result.update(passed=verdict["passed"], failures=verdict["failures"])
    else:
        result.update(passed=False, failures=["no monitor verdict: "
                                              + " | ".join(proc.stderr.splitlines()[-5:])])
    if stats_file.exists():
        figures = json.loads(stats_file.read_text(encoding="utf-8"))
        result.update(figures)
        elapsed = figures["elapsed_seconds"]
        result["pages_per_second"] = figures["pages"] / elapsed if elapsed else None
        steady = figures["first_to_last_page_seconds"]
        result["steady_pages_per_second"] = ((figures["pages"] - 1) / steady
                                             if steady and figures["pages"] > 1 else None)
    return result


def crawl_bench(root: Path, pages: dict[str, int],
                modes: Sequence[str] = ("polite", "ceiling")) -> list[dict[str, Any]]:
    from spiders.replay_server import ReplayServer

    snapshots = build_crawl_snapshots(root, pages)
    results = []
    with ReplayServer(snapshots) as server:
        for kind, count in pages.items():
            for mode in modes:
                say(f"crawl: {count} {kind} pages, {mode}")
                results.append(crawl_once(root, server.url, kind, count, mode))
    return results
