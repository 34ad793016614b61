"""The crawl `gpuprices run` starts before its Dagster run (pipelines/crawl_ahead.py): the crawl
step takes it when it is the same run, sources and crawler, and says what it logged; any other
step crawls itself, as before. Crawling is replaced by a recording stand-in."""

from __future__ import annotations

import dagster as dg
import pytest
from dagster_duckdb import DuckDBResource

from pipelines import crawl_ahead
from pipelines.defs.ingest import build_raw_offers
from pipelines.resources import CrawlerResource, CrawlResult
from pipelines.warehouse.db import DUCKDB_CONFIG

RUN_ID = "0123abcd-0000-4000-8000-000000000000"


@pytest.fixture
def calls(monkeypatch):
    """Every crawl_many call (jobs), each crawl failing with one failure and a log warning."""
    made: list[dict[str, str]] = []

    def crawl_many(self, jobs, log=None, settings=None):
        made.append(dict(jobs))
        if log:
            log.warning("[plain-HTTP] said while crawling")
        return {s: CrawlResult(s, c, False, 0, ["stand-in crawl"], self.items_path(s, c))
                for s, c in jobs.items()}

    monkeypatch.setattr(CrawlerResource, "crawl_many", crawl_many)
    yield made
    crawl_ahead._ahead.clear()


def run_step(tmp_path, crawler: CrawlerResource, source: str):
    defs = dg.Definitions(assets=[build_raw_offers()], resources={
        "crawler": crawler,
        "duckdb": DuckDBResource(database=str(tmp_path / "work.db"),
                                 connection_config=DUCKDB_CONFIG)})
    job = defs.resolve_implicit_global_asset_job_def()
    with dg.DagsterInstance.ephemeral() as instance:
        result = job.execute_in_process(run_id=RUN_ID, instance=instance, raise_on_error=False,
                                        asset_selection=[dg.AssetKey(["raw", source])])
        said = [record.user_message for record in instance.all_logs(RUN_ID)]
    with DuckDBResource(database=str(tmp_path / "work.db")).get_connection() as con:
        crawls = con.execute("select source, crawl_id, run_id from raw.crawls").fetchall()
    return result, crawls, said


def crawler(tmp_path, **settings) -> CrawlerResource:
    return CrawlerResource(data_dir=str(tmp_path / "data"), **settings)


def test_the_step_takes_the_crawl_started_before_the_run(tmp_path, calls):
    crawl_ahead.start(RUN_ID, ["idc_sinnet_bj"], crawler(tmp_path))
    result, crawls, said = run_step(tmp_path, crawler(tmp_path), "idc_sinnet_bj")
    assert result.success
    [jobs] = calls                                     # crawled once, ahead, not by the step
    assert crawls == [("idc_sinnet_bj", jobs["idc_sinnet_bj"], RUN_ID)]
    assert jobs["idc_sinnet_bj"].endswith(RUN_ID[:8])
    assert any("said while crawling" in m for m in said)
    assert any("started before the run" in m for m in said)


@pytest.mark.parametrize("sources, settings", [
    (["vultr"], {}),                                   # other sources
    (["idc_sinnet_bj"], {"mode": "raw"}),              # another crawler
])
def test_a_crawl_that_is_not_the_steps_own_is_left_and_the_step_crawls(
        tmp_path, calls, sources, settings):
    crawl_ahead.start(RUN_ID, sources, crawler(tmp_path, **settings))
    result, crawls, _ = run_step(tmp_path, crawler(tmp_path), "idc_sinnet_bj")
    assert result.success
    assert len(calls) == 2                             # the one ahead, then the step's own
    assert crawls == [("idc_sinnet_bj", calls[1]["idc_sinnet_bj"], RUN_ID)]


def test_without_a_crawl_ahead_the_step_crawls_and_a_crawl_is_taken_once(tmp_path, calls):
    assert crawl_ahead.take(RUN_ID, ["vultr"], crawler(tmp_path)) is None
    crawl_ahead.start(RUN_ID, ["vultr"], crawler(tmp_path))
    assert crawl_ahead.take("another-run", ["vultr"], crawler(tmp_path)) is None
    taken = crawl_ahead.take(RUN_ID, ["vultr"], crawler(tmp_path))
    assert taken is not None and taken.results.result()["vultr"].failures == ["stand-in crawl"]
    assert crawl_ahead.take(RUN_ID, ["vultr"], crawler(tmp_path)) is None
    result, _, _ = run_step(tmp_path, crawler(tmp_path), "vultr")
    assert result.success and len(calls) == 2
