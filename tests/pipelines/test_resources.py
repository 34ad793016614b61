"""The crawler resource: a source whose required key is missing is skipped with a clear message."""

from dataclasses import replace

import pytest

from pipelines.resources import CrawlerResource
from spiders.registry import spider_class
from spiders.source_manifest import manifest


def test_missing_required_key_skips_the_source(tmp_path, monkeypatch):
    spider = spider_class("azure")
    monkeypatch.setattr(spider, "api_key_required", True)
    monkeypatch.setattr(spider, "api_key_env", "GPUPRICES_TEST_AZURE_KEY")
    # what the crawl step reads instead of the class (spiders/source_manifest.py) says the same
    monkeypatch.setitem(manifest(), "azure", replace(
        manifest()["azure"], api_key_required=True, key_names=("GPUPRICES_TEST_AZURE_KEY",)))
    monkeypatch.delenv("GPUPRICES_TEST_AZURE_KEY", raising=False)
    # opted in: azure's snapshot is an opt-in fixture (illustrative prices), crawled here for the
    # missing-key path
    result = CrawlerResource(data_dir=str(tmp_path), opt_in=["azure"]).crawl("azure", "c1")
    assert result.skipped and result.status == "skipped" and not result.passed
    assert result.failures == ["skipped: azure needs an API key in the environment variable "
                               "GPUPRICES_TEST_AZURE_KEY"]
    assert not (tmp_path / "raw" / "crawls").exists()  # no crawl was started


def test_unknown_mode_is_refused(tmp_path):
    with pytest.raises(ValueError, match="crawler mode must be one of replay, raw, live"):
        CrawlerResource(data_dir=str(tmp_path), mode="offline").crawl("azure", "c1")
