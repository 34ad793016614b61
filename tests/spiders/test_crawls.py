"""Real crawls over the replay server: every source passes its monitors on its snapshot, the raw
archive holds every body, and a source that is down or changed fails loudly with the reason."""

import gzip
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from pipelines.resources import CrawlerResource, CrawlResult
from spiders.layout import SNAPSHOT_DIR
from spiders.registry import source_names, spider_class
from spiders.replay_server import Fault, ReplayServer
from tests.helpers.crawl import run_crawl

# Token-only sources (autodl_cn, gpushare_cn) are skipped without their token: their own
# test_<source>.py replays them with a fake one.
PLAIN_SOURCES = [s for s in source_names() if not spider_class(s).api_key_required]


@pytest.fixture(scope="module")
def shared_crawl(tmp_path_factory) -> tuple[Path, dict[str, CrawlResult]]:
    """Every plain-HTTP source crawled once over the bundled snapshots, side by side in one Scrapy
    process: the shared crawl `gpuprices run` does (each source alone in its own `scrapy crawl`
    is the fault tests' and test_crawl_many.py's)."""
    data_dir = tmp_path_factory.mktemp("shared")
    # every snapshot, opt-in ones too: each spider is tested on its fixture
    crawler = CrawlerResource(data_dir=str(data_dir), timeout_seconds=120, opt_in=["all"])
    return data_dir, crawler.crawl_many(dict.fromkeys(PLAIN_SOURCES, "test"))


@pytest.mark.parametrize("source", PLAIN_SOURCES)
def test_source_crawls_its_snapshot(source, shared_crawl):
    data_dir, results = shared_crawl
    result = results[source]
    assert not result.retried_alone, result.retry_reason
    verdict = result.verdict
    assert verdict["passed"], verdict["failures"]
    assert verdict["source"] == source
    offers = [json.loads(line) for line in result.items_path.read_text().splitlines()]
    assert verdict["offers"] == len(offers) > 0
    # Every offer points at a body in the archive, stored under its hash.
    for ref in {o["raw_ref"] for o in offers}:
        body = gzip.decompress((data_dir / "raw" / "objects" / ref[:2] / f"{ref}.gz").read_bytes())
        assert hashlib.sha256(body).hexdigest() == ref
    fetch_log = data_dir / "raw" / "fetches" / source / "test.jsonl"
    fetches = [json.loads(line) for line in fetch_log.read_text().splitlines()]
    # The archive records live URLs, never the loopback replay address.
    assert fetches and all("127.0.0.1" not in f["url"] for f in fetches)


def test_azure_follows_every_page(replay_server, tmp_path):
    offers, verdict = run_crawl("azure", replay_server.url, tmp_path)
    pages = json.loads((SNAPSHOT_DIR / "azure" / "manifest.json").read_text())["entries"]
    api_fetches = [f for f in verdict["fetches"] if "/api/retail/prices" in f["url"]]
    assert len(api_fetches) == len(pages) == 3
    # the SkyPilot catalog v6 rows the snapshot holds: Azure's US regions
    assert len({o["region_text"] for o in offers}) >= 8


def test_source_down_fails_its_monitor_with_the_reason(tmp_path):
    empty = tmp_path / "no_snapshots"
    empty.mkdir()
    with ReplayServer(empty) as down:  # answers 404 to every vendor URL
        offers, verdict = run_crawl("idc_sinnet_bj", down.url, tmp_path)
    assert offers == []
    assert not verdict["passed"]
    assert any("only 0 offers collected" in f for f in verdict["failures"])
    assert any("responses had an error status (HTTP 404 x1)" in f for f in verdict["failures"])


def test_changed_layout_fails_its_monitor(tmp_path):
    snapshots = tmp_path / "snapshots"
    shutil.copytree(SNAPSHOT_DIR / "idc_sinnet_bj", snapshots / "idc_sinnet_bj")
    page = snapshots / "idc_sinnet_bj" / "gpu_price.html"
    page.write_text(page.read_text(encoding="utf-8").replace('id="gpu-price"', 'id="prices-v2"'),
                    encoding="utf-8")
    with ReplayServer(snapshots) as changed:
        offers, verdict = run_crawl("idc_sinnet_bj", changed.url, tmp_path)
    assert offers == [] and not verdict["passed"]
    assert any("table headers" in f and "not found" in f for f in verdict["failures"])


IDC_URL = "https://www.sinnet.com.cn/gpu/price.html"


def test_429_retry_after_is_honoured_then_recovers(tmp_path):
    faults = {IDC_URL: [Fault(429, {"Retry-After": "1"})]}
    with ReplayServer(SNAPSHOT_DIR, faults=faults) as flaky:
        offers, verdict = run_crawl("idc_sinnet_bj", flaky.url, tmp_path)
    assert verdict["passed"], verdict["failures"]
    assert len(offers) == 20
    assert verdict["stats"]["retry/count"] == 1
    assert verdict["stats"]["retry/backoff_seconds"] == 1.0   # the server's Retry-After


def test_503_backs_off_exponentially_then_gives_up(tmp_path):
    faults = {IDC_URL: [Fault(503)] * 3}
    with ReplayServer(SNAPSHOT_DIR, faults=faults) as down:
        offers, verdict = run_crawl("idc_sinnet_bj", down.url, tmp_path,
                                    "RETRY_BACKOFF_BASE=0.2")
    assert offers == [] and not verdict["passed"]
    assert verdict["stats"]["retry/max_reached"] == 1
    assert verdict["stats"]["retry/backoff_seconds"] == pytest.approx(0.2 + 0.4)  # 0.2 x 2^(n-1)
    assert any("HTTP 503 x1" in f for f in verdict["failures"])
