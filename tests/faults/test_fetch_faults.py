"""Fetch faults: a real `scrapy crawl` (subprocess) over a replay server that misbehaves.

Each fault is either transient (served once or twice, then the recorded page: the crawl retries,
recovers and yields exactly the fault-free offers) or persistent (the source fails, and its
verdict says what happened). Targets: idc_sinnet_bj (one HTML page), azure (three JSON pages)
and gcp (Chromium; a test-only copy of its page draws the tables from an XHR, which fails:
tests/faults/gcp_xhr_page.py). Timeouts and back-offs are lowered with `-s`.
docs/robustness.md has the table of faults, behaviours and tests.
"""

from __future__ import annotations

import json
import random
import shutil
import socket
import threading
from pathlib import Path

import pytest
from scrapy.settings import Settings

from spiders.layout import SNAPSHOT_DIR
from spiders.registry import spider_class
from spiders.replay_server import Fault, ReplayServer, replay_url
from tests.faults.gcp_xhr_page import TABLES_XHR, scripted_snapshots
from tests.helpers.crawl import run_crawl
from tests.helpers.runs import gpuprices, query

IDC = "idc_sinnet_bj"
IDC_URL = "https://www.sinnet.com.cn/gpu/price.html"
AZURE = "azure"
AZURE_PAGES = [e["url"] for e in
               json.loads((SNAPSHOT_DIR / AZURE / "manifest.json").read_text())["entries"]]
# Its live URL is on the reserved .example TLD: if a redirect ever escapes the replay server,
# the request can reach no real host.
NANJING = "idc_nanjing"
NANJING_URL = "https://www.nanjing-idc.example/gpu/price.html"

FAST_RETRY = "RETRY_BACKOFF_BASE=0.1"      # back-off 0.1 s, 0.2 s instead of 1 s, 2 s
SHORT_TIMEOUT = "DOWNLOAD_TIMEOUT=2"
SHORT_RENDER_WAIT = "RENDER_WAIT_TIMEOUT=3"   # a table that never renders: fail after 3 s, not 20
HANG = Fault(kind="hang", delay_seconds=60)  # silent far past the 2 s timeout; ends with the server
MAX_SIZE = 16 * 1024 * 1024                  # spiders/settings.py DOWNLOAD_MAXSIZE
FIFTY_MB = 50 * 1024 * 1024

def canonical(offers: list[dict]) -> list[str]:
    return sorted(json.dumps(o, sort_keys=True, ensure_ascii=False) for o in offers)


def crawl(source: str, faults: dict[str, list[Fault]], tmp_path: Path, *settings: str,
          snapshots: Path = SNAPSHOT_DIR) -> tuple[list[dict], dict, list]:
    """One crawl of `source` over a replay server injecting `faults`; offers, verdict, faults
    served."""
    with ReplayServer(snapshots, faults=faults) as server:
        offers, verdict = run_crawl(source, server.url, tmp_path, *settings)
        served = server.served
    return offers, verdict, served


def failure_text(verdict: dict) -> str:
    return " | ".join(verdict["failures"])


@pytest.fixture(scope="module")
def fault_free(replay_server, tmp_path_factory) -> dict[str, list[str]]:
    """The offers of a clean crawl of each target, to compare recovered crawls with."""
    return {source: canonical(run_crawl(source, replay_server.url,
                                        tmp_path_factory.mktemp(source))[0])
            for source in (IDC, AZURE)}


# --- transient faults: retried, recovered, nothing lost ------------------------------------------

TRANSIENT = [
    pytest.param(IDC, IDC_URL, [Fault(503)], 1, (FAST_RETRY,), id="503-once"),
    pytest.param(AZURE, AZURE_PAGES[1], [Fault(500)] * 2, 2, (FAST_RETRY,),
                 id="500-twice-on-azure-page-2"),
    pytest.param(AZURE, AZURE_PAGES[2], [Fault(429, {"Retry-After": "1"})], 1, (),
                 id="429-retry-after-on-azure-page-3"),
    # Slower than usual but within the timeout: waited for, not retried.
    pytest.param(IDC, IDC_URL, [Fault(kind="slow", delay_seconds=2)], 0, ("DOWNLOAD_TIMEOUT=30",),
                 id="slow-answer"),
    pytest.param(IDC, IDC_URL, [HANG], 1, (FAST_RETRY, SHORT_TIMEOUT), id="timeout-once"),
    # Twisted retries a request on a reused keep-alive connection once by itself, so the first
    # reset is invisible to Scrapy; the second is retried by the retry middleware.
    pytest.param(IDC, IDC_URL, [Fault(kind="reset")] * 2, 1, (FAST_RETRY,), id="rst-twice"),
    pytest.param(IDC, IDC_URL, [Fault(kind="close")] * 2, 1, (FAST_RETRY,),
                 id="closed-without-response-twice"),
    pytest.param(AZURE, AZURE_PAGES[0], [Fault(kind="truncate")], 1, (FAST_RETRY,),
                 id="truncated-body-once-on-azure-page-1"),
]


@pytest.mark.parametrize("source, url, faults, retries, settings", TRANSIENT)
def test_transient_fault_is_retried_and_loses_nothing(source, url, faults, retries, settings,
                                                      fault_free, tmp_path):
    offers, verdict, served = crawl(source, {url: faults}, tmp_path, *settings)
    assert [s.kind for s in served] == [f.kind for f in faults]      # every fault was served
    assert verdict["stats"].get("retry/count", 0) == retries
    assert canonical(offers) == fault_free[source]
    assert verdict["passed"], verdict["failures"]


def test_retry_after_is_what_the_crawl_waits(tmp_path):
    _, verdict, _ = crawl(AZURE, {AZURE_PAGES[2]: [Fault(429, {"Retry-After": "1"})]}, tmp_path)
    assert verdict["stats"]["retry/backoff_seconds"] == 1.0


# --- persistent faults: the source fails, and says why -------------------------------------------

PERSISTENT = [
    pytest.param(IDC, IDC_URL, [HANG] * 3, (SHORT_TIMEOUT,),
                 ["3 download attempts failed (DownloadTimeoutError x3)"], id="timeout"),
    pytest.param(IDC, IDC_URL, [Fault(500)] * 3, (), ["HTTP 500 x1"], id="500"),
    pytest.param(AZURE, AZURE_PAGES[1], [Fault(503)] * 3, (), ["HTTP 503 x1"],
                 id="503-on-azure-page-2"),
    pytest.param(IDC, IDC_URL, [Fault(429, {"Retry-After": "0"})] * 3, (), ["HTTP 429 x1"],
                 id="429"),
    # a few more than the 1 + 3 attempts that reach the server (see rst-twice above)
    pytest.param(IDC, IDC_URL, [Fault(kind="reset")] * 6, (), ["DownloadFailedError"], id="rst"),
    pytest.param(IDC, IDC_URL, [Fault(kind="close")] * 6, (), ["DownloadFailedError"],
                 id="closed-without-response"),
    pytest.param(AZURE, AZURE_PAGES[0], [Fault(kind="truncate")] * 3, (),
                 ["3 download attempts failed (ResponseDataLossError x3)"],
                 id="truncated-body-on-azure-page-1"),
]


@pytest.mark.parametrize("source, url, faults, settings, expected", PERSISTENT)
def test_persistent_fault_fails_the_source_naming_it(source, url, faults, settings, expected,
                                                     fault_free, tmp_path):
    offers, verdict, served = crawl(source, {url: faults}, tmp_path, FAST_RETRY, *settings)
    assert not verdict["passed"]
    for text in expected:
        assert text in failure_text(verdict)
    assert verdict["stats"]["retry/max_reached"] == 1     # 1 + RETRY_TIMES attempts, then gave up
    assert len(offers) < len(fault_free[source])           # a partial crawl is never a passing one
    assert served and {s.url for s in served} == {url}


def test_a_failed_middle_page_keeps_the_first_page_out_of_a_passing_verdict(tmp_path):
    """Azure page 2 down: page 1's offers were collected, but the crawl fails as a whole (only a
    passing crawl is loaded, so a half-crawled source never replaces a whole one)."""
    offers, verdict, _ = crawl(AZURE, {AZURE_PAGES[1]: [Fault(503)] * 3}, tmp_path, FAST_RETRY)
    page1 = json.loads((SNAPSHOT_DIR / AZURE / "retail_prices_page1.json").read_text())["Items"]
    assert 0 < len(offers) <= len(page1)
    assert not verdict["passed"]


# --- bad 200 answers: no retry (the server said OK); the parse fails loudly -----------------------

GARBAGE = random.Random(7).randbytes(4096)
HTML_TYPE, JSON_TYPE = "text/html; charset=utf-8", "application/json; charset=utf-8"
TABLE_MISSING = ("idc_sinnet_bj: table headers ['按小时', '包月', '型号', '规格', '卡数', '库存'] "
                 "not found")


@pytest.mark.parametrize("source, url, fault, expected", [
    pytest.param(IDC, IDC_URL, Fault(200, {"Content-Type": HTML_TYPE}), TABLE_MISSING,
                 id="empty-html-page"),
    pytest.param(AZURE, AZURE_PAGES[0], Fault(200, {"Content-Type": JSON_TYPE}),
                 "Expecting value: line 1 column 1", id="empty-json-page"),
    pytest.param(IDC, IDC_URL, Fault(200, {"Content-Type": HTML_TYPE}, GARBAGE), TABLE_MISSING,
                 id="garbage-bytes-as-html"),
    pytest.param(AZURE, AZURE_PAGES[0], Fault(200, {"Content-Type": JSON_TYPE}, GARBAGE),
                 "parse error on https://prices.azure.com/api/retail/prices",
                 id="garbage-bytes-as-json"),
    # HTML labelled JSON: Scrapy builds a JSON selector, and CSS on it is refused.
    pytest.param(IDC, IDC_URL, Fault(kind="retype", content_type="application/json"),
                 "Cannot use css on a Selector of type 'json'", id="html-served-as-json"),
])
def test_bad_200_answer_fails_the_source_with_the_parse_error(source, url, fault, expected,
                                                              tmp_path):
    offers, verdict, served = crawl(source, {url: [fault]}, tmp_path)
    assert [s.kind for s in served] == [fault.kind]
    assert offers == [] and not verdict["passed"]
    assert "only 0 offers collected" in failure_text(verdict)
    assert expected in failure_text(verdict)
    assert "retry/count" not in verdict["stats"]         # a 200 is not retried


def test_json_served_as_html_is_still_read(fault_free, tmp_path):
    as_html = Fault(kind="retype", content_type="text/html")
    offers, verdict, _ = crawl(AZURE, {AZURE_PAGES[0]: [as_html]}, tmp_path)
    assert verdict["passed"], verdict["failures"]
    assert canonical(offers) == fault_free[AZURE]


def test_changed_json_layout_names_the_missing_list(tmp_path):
    snapshots = tmp_path / "snapshots"
    shutil.copytree(SNAPSHOT_DIR / AZURE, snapshots / AZURE)
    page = snapshots / AZURE / "retail_prices_page1.json"
    page.write_text(page.read_text().replace('"Items"', '"items"', 1))
    offers, verdict, _ = crawl(AZURE, {}, tmp_path, snapshots=snapshots)
    assert offers == [] and not verdict["passed"]
    assert "azure: no list at 'Items'" in failure_text(verdict)


# --- a 50 MB page: refused by DOWNLOAD_MAXSIZE, streamed, never held ------------------------------

@pytest.fixture(scope="module")
def big_page_crawls(tmp_path_factory) -> dict[str, tuple]:
    crawls = {}
    for name, declared in (("declared", True), ("streamed", False)):
        fault = Fault(kind="big", size_bytes=FIFTY_MB, declare_length=declared)
        crawls[name] = crawl(IDC, {IDC_URL: [fault] * 3}, tmp_path_factory.mktemp(name))
    return crawls


@pytest.mark.parametrize("how", ["declared", "streamed"])
def test_fifty_mb_page_is_refused_before_it_is_read(big_page_crawls, how):
    offers, verdict, served = big_page_crawls[how]
    assert offers == [] and not verdict["passed"]
    assert "1 download attempts failed (DownloadCancelledError x1)" in failure_text(verdict)
    assert [s.kind for s in served] == ["big"]          # refused, not retried
    assert served[0].bytes_sent < FIFTY_MB              # the client hung up long before the end
    assert not any(f["size"] > MAX_SIZE for f in verdict["fetches"])   # nothing big was archived


def test_refused_big_page_names_the_size_limit(big_page_crawls):
    _, verdict, _ = big_page_crawls["declared"]
    assert "DOWNLOAD_MAXSIZE" in failure_text(verdict) or "max size" in failure_text(verdict)


def _effective(setting: str, source: str) -> int:
    settings = Settings()
    settings.setmodule("spiders.settings", priority="project")
    spider_class(source).update_settings(settings)
    return settings.getint(setting)


def test_price_pages_have_a_download_size_limit():
    assert _effective("DOWNLOAD_MAXSIZE", IDC) == MAX_SIZE < FIFTY_MB
    assert 0 < _effective("DOWNLOAD_WARNSIZE", AZURE) < MAX_SIZE


def test_aws_bulk_price_lists_fit_under_its_size_limit():
    limit = _effective("DOWNLOAD_MAXSIZE", "aws")
    assert limit == 0 or limit >= 2**30      # 0: no limit


# --- redirects --------------------------------------------------------------------------------

# Redirect targets are replayed too (they once escaped to the network: meta copied by
# RedirectMiddleware carried the replay marker).


def test_a_redirect_is_followed_on_loopback(tmp_path):
    _offers, verdict, served = crawl(NANJING, {NANJING_URL: [Fault(kind="redirect_loop")]},
                                     tmp_path, FAST_RETRY)
    assert [s.kind for s in served] == ["redirect_loop"]
    assert "CannotResolveHostError" not in failure_text(verdict)
    assert verdict["passed"], verdict["failures"]


def test_redirect_loop_fails_the_source_naming_it(tmp_path):
    offers, verdict, served = crawl(NANJING, {NANJING_URL: [Fault(kind="redirect_loop")] * 10},
                                    tmp_path, FAST_RETRY, "REDIRECT_MAX_TIMES=3")
    assert offers == [] and not verdict["passed"]
    assert [s.kind for s in served] == ["redirect_loop"] * 4    # 1 + REDIRECT_MAX_TIMES, all local
    assert "redirect" in failure_text(verdict).lower()


# --- a Chromium source whose page's own XHR fails ---------------------------------------------

@pytest.fixture(scope="module")
def gcp_xhr_down(tmp_path_factory):
    root = tmp_path_factory.mktemp("gcp")
    with pytest.MonkeyPatch.context() as env:   # keyless: the rendered page path, not the API
        env.delenv("GCP_API_KEY", raising=False)
        return crawl("gcp", {TABLES_XHR: [Fault(503)] * 5}, root, SHORT_RENDER_WAIT,
                     snapshots=scripted_snapshots(root))


def test_chromium_page_whose_xhr_fails_fails_the_source(gcp_xhr_down):
    offers, verdict, served = gcp_xhr_down
    assert spider_class("gcp").render_js
    assert [s.url for s in served] == [TABLES_XHR]          # the browser's XHR met the fault
    assert offers == [] and not verdict["passed"]
    # the page never rendered its table: waiting for it timed out
    assert "only 0 offers collected (expected at least 10)" in failure_text(verdict)
    assert "TimeoutError" in failure_text(verdict)


def test_chromium_failure_names_the_failed_xhr(gcp_xhr_down):
    _, verdict, _ = gcp_xhr_down
    assert "503" in failure_text(verdict) or "test-only-tables" in failure_text(verdict)


# --- faults declared in a manifest: how a pipeline run gets a persistent one ------------------

@pytest.mark.parametrize("entry_change, expected", [
    pytest.param({"status": 503}, "HTTP 503 x1", id="status-503"),
    pytest.param({"fault": {"kind": "reset"}}, "DownloadFailedError", id="fault-rst"),
    pytest.param({"fault": {"kind": "status", "status": 200, "content_type": "text/html",
                            "body": "<html><body>请完成验证</body></html>"}},
                 "table headers", id="fault-captcha-page"),
])
def test_manifest_fault_is_served_on_every_request(entry_change, expected, tmp_path):
    snapshots = tmp_path / "snapshots"
    shutil.copytree(SNAPSHOT_DIR / IDC, snapshots / IDC)
    manifest = snapshots / IDC / "manifest.json"
    meta = json.loads(manifest.read_text())
    meta["entries"][0].update(entry_change)
    manifest.write_text(json.dumps(meta, ensure_ascii=False))
    offers, verdict, _ = crawl(IDC, {}, tmp_path, FAST_RETRY, snapshots=snapshots)
    assert offers == [] and not verdict["passed"]
    assert expected in failure_text(verdict)


# --- the fault injector itself --------------------------------------------------------------

def test_fault_declarations_are_checked():
    with pytest.raises(ValueError, match="unknown fault kind 'explode'"):
        Fault(kind="explode")
    with pytest.raises(ValueError, match="a hang needs delay_seconds"):
        Fault(kind="hang")
    with pytest.raises(ValueError, match="bounded"):
        Fault(kind="hang", delay_seconds=3600)
    with pytest.raises(ValueError, match="size_bytes"):
        Fault(kind="big")
    fault = Fault.from_dict({"kind": "status", "status": 503, "body": "维护中"})
    assert fault.body == "维护中".encode()


def test_stopping_the_server_ends_a_pending_hang():
    hang = Fault(kind="hang", delay_seconds=120)
    with ReplayServer(SNAPSHOT_DIR, faults={IDC_URL: [hang]}) as server:
        host, port = server.url.removeprefix("http://").split(":")
        client = socket.create_connection((host, int(port)), timeout=30)
        path = replay_url("", IDC_URL)
        client.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        for _ in range(600):              # until the handler has the request and hangs
            if server.served:
                break
            threading.Event().wait(0.05)
        assert [s.kind for s in server.served] == ["hang"]
    # stopped: the hanging handler closed the connection without an answer, long before 120 s
    # (the 30 s socket timeout would raise here otherwise)
    try:
        assert client.recv(1024) == b""
    except ConnectionResetError:
        pass
    finally:
        client.close()


# --- the pipeline: a source down loses none of its earlier observations -----------------------

def test_pipeline_with_a_source_down_keeps_its_earlier_observations(two_source_run, tmp_path):
    sources = ("--source", IDC, "--source", AZURE)
    clean = two_source_run             # the session's clean run of both (tests/conftest.py)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    data_dir = clean.copy_to(tmp_path)  # it runs again: on a copy
    azure_sql = "select * exclude (crawl_id) from observations where source = 'azure' order by all"
    azure_before = query(data_dir, azure_sql)
    idc_sql = "select count(*) from observations where source = 'idc_sinnet_bj'"
    [(idc_before,)] = query(data_dir, idc_sql)
    assert azure_before and idc_before

    # An hour later both sources are crawled again; Azure's page 2 answers 503 every time (the
    # CLI starts its own replay server, so the fault is declared in the snapshot's manifest).
    snapshots = tmp_path / "snapshots"
    for source in (IDC, AZURE):
        shutil.copytree(SNAPSHOT_DIR / source, snapshots / source)
        manifest = snapshots / source / "manifest.json"
        meta = json.loads(manifest.read_text(encoding="utf-8"))
        meta["captured_at"] = "2026-11-30T10:00:00Z"
        if source == AZURE:
            meta["entries"][1]["status"] = 503
        manifest.write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    proc = gpuprices(data_dir, "run", *sources, snapshots=snapshots)

    assert proc.returncode == 4, proc.stdout + proc.stderr        # partial: the other source landed
    assert "azure" in proc.stdout and "FAILED" in proc.stdout
    assert "HTTP 503 x1" in proc.stdout
    assert query(data_dir, azure_sql) == azure_before              # not one row lost or added
    assert query(data_dir, idc_sql) == [(2 * idc_before,)]        # the next hour landed
    [(status, failures, loaded)] = query(data_dir, """
        select status, failures, (select count(*) from raw.offers o where o.crawl_id = c.crawl_id)
        from raw.crawls c where source = 'azure' order by started_at desc limit 1""")
    assert status == "failed" and loaded == 0                      # page 1's offers were not loaded
    assert any("HTTP 503" in f for f in failures)
