"""The shared crawl (pipelines/resources.py `crawl_many`, spiders/crawl_many.py): several sources
in one Scrapy process, the Chromium ones sharing one browser, over the real replay server. Each
source gets what crawling it alone gives; a failing or slow source fails alone; sources a dead
shared process left unfinished are retried alone and say so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import pytest

from pipelines.cli.run_summary import retried_alone
from pipelines.resources import CrawlerResource, CrawlResult
from spiders.crawl_many import EXIT_AFTER_ENV, EXIT_CODE_TEST_HOOK
from spiders.layout import SNAPSHOT_DIR
from spiders.registry import spider_class
from tests.faults.gcp_xhr_page import TABLES_XHR, scripted_snapshots

HTTP_SOURCES = ["azure", "idc_sinnet_bj", "vultr"]
CHROMIUM_SOURCE = "gcp"   # keyless: its pricing page, rendered in Chromium


def offers(result: CrawlResult) -> list[str]:
    """A crawl's offers, one canonical JSON text each, sorted (crawl order is not kept)."""
    lines = result.items_path.read_text(encoding="utf-8").splitlines()
    return sorted(json.dumps(json.loads(line), sort_keys=True) for line in lines)


def crawler(data_dir: Path, snapshots: Path = SNAPSHOT_DIR) -> CrawlerResource:
    # every snapshot, opt-in ones too: the crawl mechanics are tested on the fixtures
    return CrawlerResource(data_dir=str(data_dir), snapshot_dir=str(snapshots),
                           timeout_seconds=120, opt_in=["all"])


def test_the_sources_really_are_of_both_kinds():
    assert spider_class(CHROMIUM_SOURCE).render_js
    assert not any(spider_class(s).render_js for s in HTTP_SOURCES)


@pytest.fixture(scope="module")
def shared_and_alone(tmp_path_factory):
    # gcp's page as a test-only copy whose script draws the tables from an XHR (gcp_xhr_page.py),
    # so the shared browser has a data request of the page's own to answer and archive
    sources = [*HTTP_SOURCES, CHROMIUM_SOURCE]
    snapshots = scripted_snapshots(tmp_path_factory.mktemp("snapshots"), *HTTP_SOURCES)
    shared_dir, alone_dir = tmp_path_factory.mktemp("shared"), tmp_path_factory.mktemp("alone")
    with pytest.MonkeyPatch.context() as env:
        env.delenv("GCP_API_KEY", raising=False)   # keyless: the rendered page path
        shared = crawler(shared_dir, snapshots).crawl_many({s: f"{s}-shared" for s in sources})
        alone = {s: crawler(alone_dir, snapshots).crawl(s, f"{s}-alone") for s in sources}
    return shared, alone


def test_shared_crawl_gives_each_source_what_crawling_it_alone_gives(shared_and_alone):
    shared, alone = shared_and_alone
    assert list(shared) == [*HTTP_SOURCES, CHROMIUM_SOURCE]
    for source, result in shared.items():
        assert result.passed, (source, result.failures)
        assert not result.retried_alone and result.retry_reason == ""
        assert result.offers > 0 and result.offers == alone[source].offers
        assert offers(result) == offers(alone[source]), source
        # each source keeps its own verdict, named by its own crawl id
        assert result.verdict["source"] == source
        assert result.verdict["crawl_id"] == f"{source}-shared"


def test_shared_crawl_keeps_each_sources_own_settings(shared_and_alone):
    shared, _ = shared_and_alone
    # the Chromium source rendered its pages (its XHR was archived from inside the browser);
    # the plain-HTTP sources never started a browser
    fetches = shared[CHROMIUM_SOURCE].items_path.parents[2] / "fetches" / CHROMIUM_SOURCE
    log = (fetches / f"{CHROMIUM_SOURCE}-shared.jsonl").read_text(encoding="utf-8")
    assert len(log.splitlines()) >= 2
    assert TABLES_XHR in {json.loads(line)["url"] for line in log.splitlines()}
    for source in HTTP_SOURCES:
        assert shared[source].verdict["requests"] >= 1


def break_source(snapshots: Path, source: str) -> None:
    """Delete a source's snapshots: every request of it gets a 404 from the replay server."""
    shutil.rmtree(snapshots / source)


def delay_source(snapshots: Path, source: str, seconds: float, kind: str = "hang") -> None:
    """Every request of the source waits `seconds` (bounded), then gets nothing (a hang: the
    connection closes) or its recorded response (slow)."""
    manifest_path = snapshots / source / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    for entry in manifest["entries"]:
        entry["fault"] = {"kind": kind, "delay_seconds": seconds}
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")


def test_a_failing_and_a_timed_out_source_fail_alone(tmp_path):
    snapshots = tmp_path / "snapshots"
    shutil.copytree(SNAPSHOT_DIR, snapshots)
    break_source(snapshots, "vultr")
    delay_source(snapshots, "idc_sinnet_bj", 6)    # hangs past its 2 s time limit
    resource = crawler(tmp_path / "data", snapshots)
    results = resource.crawl_many({s: f"{s}-c1" for s in HTTP_SOURCES},
                                  settings={"idc_sinnet_bj": {"CLOSESPIDER_TIMEOUT": 2}})
    assert results["azure"].passed and results["azure"].offers > 0
    vultr = results["vultr"]
    assert not vultr.passed and vultr.offers == 0
    assert any("HTTP 404" in failure for failure in vultr.failures), vultr.failures
    idc = results["idc_sinnet_bj"]
    assert not idc.passed
    assert "crawl ended with 'closespider_timeout', not 'finished'" in idc.failures
    # each verdict came from the shared process: nothing was retried
    assert not any(r.retried_alone for r in results.values())


def test_sources_a_dead_shared_process_left_are_retried_alone(tmp_path, monkeypatch):
    # azure answers at once, the other two slowly: the shared process dies (the test hook) right
    # after azure's verdict, with the other two still crawling
    snapshots = tmp_path / "snapshots"
    shutil.copytree(SNAPSHOT_DIR, snapshots)
    slow = ["idc_sinnet_bj", "vultr"]
    for source in slow:
        delay_source(snapshots, source, 3, kind="slow")
    monkeypatch.setenv(EXIT_AFTER_ENV, "1")
    resource = crawler(tmp_path / "data", snapshots)
    results = resource.crawl_many({s: f"{s}-c1" for s in HTTP_SOURCES})
    assert [s for s, r in results.items() if r.retried_alone] == slow
    for source, result in results.items():
        assert result.passed and result.offers > 0, (source, result.failures)
    for source in slow:
        reason = results[source].retry_reason
        assert reason == (f"the shared plain-HTTP crawl process exited with code "
                          f"{EXIT_CODE_TEST_HOOK} before this source finished")
        # the retry started the fetch log afresh: each body's record once, not twice
        fetches = tmp_path / "data" / "raw" / "fetches" / source / f"{source}-c1.jsonl"
        urls = [json.loads(line)["url"] for line in fetches.read_text().splitlines()]
        assert len(urls) == len(set(urls)), urls


def test_the_run_summary_names_the_sources_retried_alone():
    @dg.multi_asset(specs=[dg.AssetSpec(["raw", "azure"]), dg.AssetSpec(["raw", "vultr"])])
    def crawled():
        yield dg.MaterializeResult(asset_key=["raw", "azure"],
                                   metadata={"retried_alone": "the shared process died"})
        yield dg.MaterializeResult(asset_key=["raw", "vultr"], metadata={"offers": 3})

    result = dg.materialize([crawled])
    assert retried_alone(result) == [("azure", "the shared process died")]
