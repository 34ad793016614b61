"""`gpuprices check-sources`: the verdict on a probe's facts (table-driven and a property), then the
real command over the replay server on loopback: the bundled snapshots match; a changed shape, a
removed field, an HTTP error and a hung server each fail their source with the reason while the
others pass; nothing is written to the data directory."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from pipelines.cli import check_sources as cs
from pipelines.cli import main
from pipelines.cli.source_probe import probe_settings
from spiders.layout import SNAPSHOT_DIR
from spiders.registry import source_names, spider_class
from tests.helpers.spider_contract import fake_keys

URL = "https://example.com/prices"


# --- the verdict on one probe's facts ------------------------------------------------------------

def facts(**overrides) -> dict:
    """The facts of a probe whose page was fetched and read well (20 offers, minimum 10)."""
    return {"page_url": URL, "page_status": 200, "offers": 20, "min_offers": 10, "missing": {},
            "parse_errors": [], "robots_forbidden": 0, **overrides}


VERDICTS = [
    pytest.param(facts(), cs.MATCHES, [], id="matches"),
    pytest.param(facts(offers=10), cs.MATCHES, [], id="exactly-the-minimum"),
    pytest.param(facts(page_status=None, page_error="DownloadTimeoutError: took longer than 2 s",
                       offers=0), cs.FETCH_FAILED, ["timeout: no answer within 2 s"],
                 id="timeout"),
    pytest.param(facts(page_status=None, page_error="TimeoutError: Page.goto: Timeout 2000ms",
                       offers=0), cs.FETCH_FAILED, ["timeout"], id="browser-timeout"),
    pytest.param(facts(page_status=None, page_error="DNSLookupError: no such host", offers=0),
                 cs.FETCH_FAILED, ["download failed: DNSLookupError"], id="dns"),
    pytest.param(facts(page_status=503, offers=0), cs.FETCH_FAILED, ["HTTP error 503"],
                 id="http-503"),
    pytest.param(facts(page_status=404, offers=0), cs.FETCH_FAILED, ["HTTP error 404"],
                 id="http-404"),
    pytest.param(facts(robots_forbidden=1, page_status=None, offers=0), cs.FETCH_FAILED,
                 ["robots.txt disallows"], id="robots"),
    pytest.param(facts(page_url=None, page_status=None, offers=0), cs.FETCH_FAILED,
                 ["made no request"], id="no-request"),
    pytest.param(facts(offers=0, parse_errors=["ValueError: no list at 'Items'"]), cs.CHANGED,
                 ["parse error: ValueError: no list at 'Items'", "zero offers"], id="parse-error"),
    pytest.param(facts(offers=0), cs.CHANGED, ["zero offers"], id="zero-offers"),
    pytest.param(facts(offers=9), cs.CHANGED, ["only 9 offers (at least 10 expected)"],
                 id="too-few"),
    # AWS-like: the crawl starts from 9 pages, so the one page checked owes ceil(30 / 9) = 4.
    pytest.param(facts(offers=4, min_offers=30, sibling_pages=9), cs.MATCHES, [],
                 id="share-of-a-multi-page-minimum"),
    pytest.param(facts(offers=3, min_offers=30, sibling_pages=9), cs.CHANGED,
                 ["only 3 offers (at least 4 expected: the crawl's 30 over 9 pages like this one)"],
                 id="below-the-share"),
    pytest.param(facts(missing={"region_text": 20, "sku": 3}), cs.CHANGED,
                 ["20 of 20 offers miss required field 'region_text'",
                  "3 of 20 offers miss required field 'sku'"], id="missing-fields"),
    # A page that could not be fetched says so, not "zero offers" on top.
    pytest.param(facts(page_status=500, offers=0, parse_errors=["x"]), cs.FETCH_FAILED,
                 ["HTTP error 500"], id="fetch-failure-hides-shape"),
]


@pytest.mark.parametrize("probe, status, reasons", VERDICTS)
def test_judge(probe, status, reasons):
    check = cs.judge("src", probe, timeout_seconds=2)
    assert check.status == status
    assert len(check.reasons) == len(reasons)
    for got, expected in zip(check.reasons, reasons, strict=True):
        assert expected in got


@given(offers=st.integers(0, 500), min_offers=st.integers(1, 100), sibling_pages=st.integers(1, 20),
       status=st.sampled_from([None, 200, 301, 404, 429, 500, 503]),
       missing=st.dictionaries(st.sampled_from(["sku", "gpu_text", "region_text"]),
                               st.integers(1, 5)),
       parse_errors=st.lists(st.text(max_size=20), max_size=2))
def test_judge_matches_exactly_when_nothing_is_wrong(offers, min_offers, sibling_pages, status,
                                                      missing, parse_errors):
    probe = facts(offers=offers, min_offers=min_offers, sibling_pages=sibling_pages,
                  page_status=status, missing=missing, parse_errors=parse_errors)
    check = cs.judge("src", probe, timeout_seconds=30)
    assert (check.status == cs.MATCHES) == (not check.reasons)
    assert check.min_offers <= min_offers
    if status is not None and status >= 400:
        assert check.status == cs.FETCH_FAILED
    elif check.status == cs.MATCHES:
        assert offers >= check.min_offers and not missing and not parse_errors


def test_probe_settings_are_the_projects_made_polite_and_writing_nothing(tmp_path):
    from spiders import settings as project

    settings = probe_settings(tmp_path / "data", tmp_path / "result.json", 7)
    assert settings["USER_AGENT"] == project.USER_AGENT
    assert settings.getbool("ROBOTSTXT_OBEY") and not settings.getbool("RETRY_ENABLED")
    assert settings.getfloat("DOWNLOAD_TIMEOUT") == 7
    assert settings["GPUPRICES_DATA_DIR"] == str(tmp_path / "data")
    middlewares = settings.getdict("DOWNLOADER_MIDDLEWARES")
    assert middlewares["spiders.middlewares.raw_archive.RawArchiveMiddleware"] is None
    assert middlewares["spiders.middlewares.replay.ReplayMiddleware"] == 110
    assert settings.getdict("EXTENSIONS")["spiders.extensions.monitors.OfferMonitor"] is None


# --- the command on loopback ---------------------------------------------------------------------

def run(*args: str) -> tuple[int, list[dict] | str]:
    result = CliRunner().invoke(main, ["check-sources", *args], catch_exceptions=False)
    if "json" in args:
        return result.exit_code, json.loads(result.output)
    return result.exit_code, result.output


def by_source(checks: list[dict]) -> dict[str, dict]:
    return {c["source"]: c for c in checks}


def edit(path: Path, old: str, new: str, *, regex: bool = False) -> None:
    """Change a copied snapshot file; the change must take (else the test would prove nothing)."""
    text = path.read_text(encoding="utf-8")
    changed = re.sub(old, new, text) if regex else text.replace(old, new)
    assert changed != text, f"{old!r} not in {path}"
    path.write_text(changed, encoding="utf-8")


def edit_manifest_entry(snapshots: Path, source: str, **fields) -> None:
    path = snapshots / source / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["entries"][0].update(fields)
    path.write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")


def edit_azure_items(snapshots: Path, change) -> None:
    path = snapshots / "azure" / "retail_prices_page1.json"
    page = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(change(page)), encoding="utf-8")


@pytest.fixture
def snapshots(tmp_path: Path) -> Path:
    """A copy of the bundled snapshots to change."""
    return Path(shutil.copytree(SNAPSHOT_DIR, tmp_path / "snapshots"))


@pytest.fixture
def quiet_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The configured data directory and the temp directory, both empty; a check writes neither
    (its probes' temporary directories are removed)."""
    data, temp = tmp_path / "data", tmp_path / "tmp"
    data.mkdir()
    temp.mkdir()
    monkeypatch.setenv("GPUPRICES_DATA_DIR", str(data))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return data, temp


def test_the_bundled_snapshots_match_and_nothing_is_written(quiet_dirs, monkeypatch):
    # token-only sources (autodl_cn, gpushare_cn, gongji_cn) are checked too, with the
    # contract's fake keys (a signing key must parse): replay matches no header, and a missing
    # token is tested below (skipped, never failed)
    for source in source_names():
        if spider_class(source).api_key_required:
            for name, value in fake_keys(source).items():
                monkeypatch.setenv(name, value)
    code, checks = run("--format", "json")
    assert [c["source"] for c in checks] == source_names()
    assert {c["source"]: c["reasons"] for c in checks if c["status"] != cs.MATCHES} == {}
    assert code == cs.EXIT_OK
    for check in checks:
        assert check["offers"] >= check["min_offers"] > 0
        assert check["http_status"] == 200
        assert 1 <= check["requests"] <= cs.MAX_REQUESTS   # one at a time, a few at most
    data, temp = quiet_dirs
    assert list(data.rglob("*")) == [] and list(temp.rglob("*")) == []


def test_a_changed_shape_fails_that_source_and_the_others_pass(snapshots):
    # a renamed JSON field: Azure's envelope calls its list "Records" instead of "Items"
    edit_azure_items(snapshots, lambda page: {("Records" if k == "Items" else k): v
                                              for k, v in page.items()})
    # a different table: the IDC's price table has another id, so the rows' selector finds none
    edit(snapshots / "idc_sinnet_bj" / "gpu_price.html", 'id="gpu-price"', 'id="gpu-list"')
    code, checks = run("--snapshots", str(snapshots), "--format", "json", "--source", "azure",
                       "--source", "idc_sinnet_bj", "--source", "idc_nanjing")
    checks = by_source(checks)
    assert code == cs.EXIT_CHANGED
    assert checks["idc_nanjing"]["status"] == cs.MATCHES
    azure, sinnet = checks["azure"], checks["idc_sinnet_bj"]
    assert azure["status"] == sinnet["status"] == cs.CHANGED
    assert "parse error" in azure["reasons"][0] and "'Items'" in azure["reasons"][0]
    assert "zero offers" in azure["reasons"]
    assert "table headers" in sinnet["reasons"][0] and "按小时" in sinnet["reasons"][0]


def test_a_removed_field_fails_that_source_with_its_name(snapshots):
    # a JSON field gone from every item: the spider cannot read the region
    edit_azure_items(snapshots, lambda page: {**page, "Items": [
        {k: v for k, v in item.items() if k != "armRegionName"} for item in page["Items"]]})
    # a column emptied: the regions of an IDC table are blank, the offers miss region_text
    edit(snapshots / "idc_northwest" / "gpu_price.html", r"<tr><td>[^<]+</td>", "<tr><td></td>",
         regex=True)
    code, checks = run("--snapshots", str(snapshots), "--format", "json", "--source", "azure",
                       "--source", "idc_northwest", "--source", "idc_guian")
    checks = by_source(checks)
    assert code == cs.EXIT_CHANGED
    assert checks["idc_guian"]["status"] == cs.MATCHES
    assert checks["azure"]["status"] == cs.CHANGED
    assert "'armRegionName'" in checks["azure"]["reasons"][0]
    northwest = checks["idc_northwest"]
    assert northwest["status"] == cs.CHANGED
    assert northwest["reasons"] == [f"{northwest['offers']} of {northwest['offers']} offers miss "
                                    "required field 'region_text'"]


def test_an_http_error_and_a_hung_server_fail_their_sources_within_the_timeout(snapshots):
    edit_manifest_entry(snapshots, "idc_nanjing", status=503)
    # silent far beyond the 2 s timeout (and bounded: it ends when the replay server stops)
    edit_manifest_entry(snapshots, "idc_sinnet_bj", fault={"kind": "hang", "delay_seconds": 60})
    code, checks = run("--snapshots", str(snapshots), "--format", "json", "--timeout", "2",
                       "--source", "idc_nanjing", "--source", "idc_sinnet_bj",
                       "--source", "idc_ulanqab")
    checks = by_source(checks)
    assert code == cs.EXIT_CHANGED
    assert checks["idc_ulanqab"]["status"] == cs.MATCHES
    assert checks["idc_nanjing"]["status"] == cs.FETCH_FAILED
    assert checks["idc_nanjing"]["reasons"] == [
        "HTTP error 503 from https://www.nanjing-idc.example/gpu/price.html"]
    hung = checks["idc_sinnet_bj"]
    assert hung["status"] == cs.FETCH_FAILED
    assert hung["reasons"][0].startswith("timeout: no answer within 2 s from "
                                         "https://www.sinnet.com.cn/gpu/price.html")


def test_a_source_without_its_required_key_is_skipped(monkeypatch):
    spider = spider_class("idc_guian")
    monkeypatch.setattr(spider, "api_key_env", "GPUPRICES_TEST_MISSING_KEY")
    monkeypatch.setattr(spider, "api_key_required", True)
    monkeypatch.delenv("GPUPRICES_TEST_MISSING_KEY", raising=False)
    code, checks = run("--source", "idc_guian", "--source", "idc_nanjing", "--format", "json")
    assert code == cs.EXIT_OK
    assert [(c["source"], c["status"]) for c in checks] == [("idc_guian", cs.SKIPPED),
                                                            ("idc_nanjing", cs.MATCHES)]
    assert "GPUPRICES_TEST_MISSING_KEY" in checks[0]["reasons"][0]
    code, output = run("--source", "idc_guian", "--source", "idc_nanjing", "--format", "table")
    assert code == cs.EXIT_OK
    assert re.search(r"idc_guian\s+skipped", output)
    assert re.search(r"idc_nanjing\s+matches", output)
    assert output.rstrip().endswith("1 matches, 1 skipped")


@pytest.mark.parametrize("args, message", [
    (["--source", "no_such_vendor"], "unknown source(s) no_such_vendor; known: "),
    (["--live", "--snapshots", str(SNAPSHOT_DIR)], "cannot go with --live"),
    (["--timeout", "0"], "--timeout"),
    (["--format", "xml"], "--format"),
], ids=["unknown-source", "live-with-snapshots", "zero-timeout", "unknown-format"])
def test_usage_errors_exit_2(args, message):
    result = CliRunner().invoke(main, ["check-sources", *args])
    assert result.exit_code == 2
    assert message in result.output


def test_help_lists_the_command():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0 and "check-sources" in result.output
