"""Which sources the default run crawls (spiders/default_sources.py): the rule reads the manifest,
opting in names a source (or all), and a crawler skips an opt-in source it was not told to crawl."""

from __future__ import annotations

import json

import pytest

from pipelines.cli.run_summary import not_selected_lines, opt_in_skips
from pipelines.resources import CrawlerResource
from spiders.default_sources import (
    OPT_IN_ENV,
    crawl_refusal,
    is_opt_in_skip,
    opt_in_from_env,
    opt_in_reason,
)
from spiders.layout import SNAPSHOT_DIR
from spiders.registry import source_names

TEMPLATE = "opt-in: template source (no real operator)"
GUESSED = "opt-in: guessed endpoint"
ILLUSTRATIVE = "opt-in: illustrative prices"


def _manifest(tmp_path, **meta) -> str:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "manifest.json").write_text(json.dumps(meta), encoding="utf-8")
    return str(tmp_path)


@pytest.mark.parametrize("meta, mode, reason", [
    ({"provenance": "modeled-unverified", "template": True, "price_basis": "illustrative"},
     "replay", TEMPLATE),
    ({"provenance": "modeled-unverified", "template": True}, "live", TEMPLATE),
    ({"provenance": "modeled-unverified", "price_basis": "published"}, "replay", GUESSED),
    ({"provenance": "modeled-unverified", "price_basis": "published"}, "live", GUESSED),
    ({"provenance": "modeled-on-public-format", "price_basis": "illustrative"}, "replay",
     ILLUSTRATIVE),
    ({"provenance": "modeled-on-public-format", "price_basis": "illustrative"}, "raw",
     ILLUSTRATIVE),
    # live, the vendor's own prices are read: the snapshot's modeled ones do not matter
    ({"provenance": "modeled-on-public-format", "price_basis": "illustrative"}, "live", None),
    # a manifest that states no basis is read as illustrative (spiders/price_basis.py)
    ({"provenance": "modeled-on-public-format"}, "replay", ILLUSTRATIVE),
    ({"provenance": "modeled-on-public-format", "price_basis": "mixed"}, "replay", None),
    ({"provenance": "modeled-on-public-format", "price_basis": "published"}, "replay", None),
    ({"provenance": "captured", "price_basis": "captured"}, "replay", None),
])
def test_the_rule_reads_the_manifest(tmp_path, meta, mode, reason):
    assert opt_in_reason("src", mode, _manifest(tmp_path, **meta)) == reason


def test_a_source_without_a_snapshot_is_crawled_by_default(tmp_path):
    assert opt_in_reason("src", "replay", str(tmp_path)) is None


@pytest.mark.parametrize("opt_in, refused", [
    ([], True), (["other"], True), (["src"], False), (["all"], False),
])
def test_naming_a_source_or_all_opts_in(tmp_path, opt_in, refused):
    snapshots = _manifest(tmp_path, provenance="modeled-on-public-format",
                          price_basis="illustrative")
    refusal = crawl_refusal("src", opt_in, "replay", snapshots)
    assert (refusal is not None) == refused
    if refused:
        assert refusal.startswith(ILLUSTRATIVE) and OPT_IN_ENV in refusal
        assert is_opt_in_skip([refusal])


@pytest.mark.parametrize("value, names", [
    ("", []), ("  ", []), ("azure", ["azure"]), ("azure, vultr,,azure", ["azure", "vultr"]),
    ("all", ["all"]),
])
def test_opt_in_from_the_environment(value, names):
    assert opt_in_from_env(value) == names


def test_a_missing_key_is_no_opt_in_skip():
    assert not is_opt_in_skip(["autodl_cn needs an API key in the environment variable X"])
    assert not is_opt_in_skip([])


def test_every_template_of_the_bundled_snapshots_is_opt_in():
    templates = [s for s in source_names()
                 if json.loads((SNAPSHOT_DIR / s / "manifest.json").read_text(encoding="utf-8"))
                 .get("template")]
    assert templates    # the idc_tables.toml templates still have snapshots to test against
    assert {opt_in_reason(s) for s in templates} == {TEMPLATE}


def test_a_crawler_skips_an_opt_in_source_it_was_not_told_to_crawl(tmp_path):
    result = CrawlerResource(data_dir=str(tmp_path)).crawl_many({"idc_guian": "c1"})["idc_guian"]
    assert result.status == "skipped" and result.failures[0].startswith(TEMPLATE)
    assert not result.opted_in and not result.items_path.exists()   # no crawl process ran


def test_a_crawl_the_run_opted_in_to_is_crawled_and_says_so(tmp_path):
    result = CrawlerResource(data_dir=str(tmp_path), opt_in=["idc_guian"]).crawl_many(
        {"idc_guian": "c1"})["idc_guian"]
    assert result.passed and result.opted_in


def test_the_summary_names_the_opt_in_skips_by_reason_and_keeps_other_skips():
    crawls = [("azure", "skipped", 0, 0, 0, [f"{ILLUSTRATIVE}; not crawled by default"], "c1"),
              ("vultr", "skipped", 0, 0, 0, [f"{ILLUSTRATIVE}; not crawled by default"], "c2"),
              ("autodl_cn", "skipped", 0, 0, 0, ["needs an API key"], "c3"),
              ("aws", "passed", 5, 5, 0, [], "c4")]
    skips = opt_in_skips(crawls)
    assert skips == {"azure": ILLUSTRATIVE, "vultr": ILLUSTRATIVE}
    lines = not_selected_lines(skips)
    assert lines[0] == f"not crawled, {ILLUSTRATIVE}: azure, vultr"
    assert OPT_IN_ENV in lines[-1]
    assert not_selected_lines({}) == []
