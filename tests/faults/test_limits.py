"""Limits everywhere: the download size limit on Chromium pages and their XHRs, a failed archive
write failing the crawl, and pathological JSON (deep nesting, huge numbers) refused by name.

Pure functions and middlewares in-process; real `scrapy crawl` subprocesses over a replay server
that misbehaves for the crawl-level behaviour (docs/robustness.md has the table).
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.async_api import async_playwright
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse, Request, TextResponse
from scrapy.utils.test import get_crawler

from spiders.base.browser import (
    FAILED_SUBREQUESTS,
    PageRoute,
    ResponseTooLarge,
    bounded_fetch,
)
from spiders.base.json_api import (
    MAX_JSON_DEPTH,
    MAX_JSON_DIGITS,
    PathologicalJson,
    json_shape_problem,
)
from spiders.layout import SNAPSHOT_DIR
from spiders.middlewares.crawl_failure import FAILED_BECAUSE
from spiders.middlewares.raw_archive import RawArchiveMiddleware
from spiders.registry import spider_class
from spiders.replay_server import Fault, ReplayServer, replay_url
from spiders.settings import CHROMIUM_ARGS
from tests.faults.gcp_xhr_page import TABLES_FILE, TABLES_XHR, scripted_snapshots
from tests.helpers.crawl import run_crawl
from tests.helpers.responses import file_response

MAX_SIZE = 16 * 1024 * 1024                  # spiders/settings.py DOWNLOAD_MAXSIZE
FIFTY_MB = 50 * 1024 * 1024
# a recorded JSON GET the bounded fetch replays (Matpool's keyless machine pools, page 1)
RECORDED_GET = "https://matgo.cn/api/machine_pools?machine_category=0&page=1&per_page=100"
RECORDED_FILE = SNAPSHOT_DIR / "matpool_cn" / "machine_pools_page1.json"
AZURE_PAGE1 = json.loads((SNAPSHOT_DIR / "azure" / "manifest.json").read_text())["entries"][0]
IDC, IDC_URL = "idc_sinnet_bj", "https://www.sinnet.com.cn/gpu/price.html"
JSON_TYPE = {"Content-Type": "application/json; charset=utf-8"}


def failure_text(verdict: dict) -> str:
    return " | ".join(verdict["failures"])


# --- pathological JSON: refused before the decoder, with a named reason ------------------------

def nested(depth: int) -> bytes:
    return b'{"Items": ' + b"[" * depth + b"]" * depth + b"}"


@pytest.mark.parametrize("body, problem", [
    (nested(MAX_JSON_DEPTH - 1), None),                 # plus the outer object: the limit
    (nested(MAX_JSON_DEPTH), f"nesting deeper than {MAX_JSON_DEPTH} levels"),
    (nested(10_000), f"nesting deeper than {MAX_JSON_DEPTH} levels"),
    (b'{"a": ' + b"9" * MAX_JSON_DIGITS + b"}", None),
    (b'{"a": ' + b"9" * (MAX_JSON_DIGITS + 1) + b"}", f"more than {MAX_JSON_DIGITS} digits"),
    (b'{"a": 0.' + b"1" * 5000 + b"}", f"more than {MAX_JSON_DIGITS} digits"),
    (b'{"a": -' + b"7" * 5000 + b"e5}", f"more than {MAX_JSON_DIGITS} digits"),
    # brackets and digits inside strings are text, escaped quotes included
    (json.dumps({"a": "[" * 10_000, "b": "9" * 10_000, "c": '\\"[[[' * 500}).encode(), None),
    (b'{"a": "\\\\", "b": ' + b"[" * 300 + b"]" * 300 + b"}", "nesting deeper"),
    # an unterminated string of escaped quotes (a quadratic trap for a naive scanner)
    (b'"' + b'\\"' * 200_000, None),
    (b"", None),
    (b"not json at all", None),                         # the decoder's own error says what it is
])
def test_json_shape_problem(body, problem):
    found = json_shape_problem(body)
    assert found == problem if problem is None else problem in found


def test_a_deep_api_body_fails_the_page_by_name_not_by_recursion():
    spider = spider_class("azure")(crawl_id="t")
    response = TextResponse(url=AZURE_PAGE1["url"], body=nested(10_000), headers=JSON_TYPE)
    with pytest.raises(PathologicalJson, match=r"refused JSON from https://prices\.azure\.com.*"
                                               r"nesting deeper than 200 levels"):
        list(spider.parse(response))


def test_the_recorded_api_bodies_pass_the_check():
    for source, file in (("azure", "retail_prices_page1.json"), ("vastai", "bundles.json"),
                         ("tencent_cn", "zone_ap-beijing-6.json"), ("runpod", "places.json")):
        assert json_shape_problem(file_response(source, file).body) is None, source


@pytest.mark.parametrize("body, named", [
    pytest.param(nested(10_000), "nesting deeper than 200 levels", id="10000-deep"),
    pytest.param(b'{"Items": [], "n": ' + b"9" * 5000 + b"}", "more than 400 digits",
                 id="5000-digit-number"),
])
def test_pathological_json_fails_the_crawl_naming_it(body, named, tmp_path):
    with ReplayServer(SNAPSHOT_DIR,
                      faults={AZURE_PAGE1["url"]: [Fault(200, JSON_TYPE, body)]}) as server:
        offers, verdict = run_crawl("azure", server.url, tmp_path)
    assert offers == [] and not verdict["passed"]
    assert named in failure_text(verdict)
    assert "recursion" not in failure_text(verdict)


# --- the bounded fetch behind the Chromium route (replay) ---------------------------------------

@pytest.mark.parametrize("declared", [True, False], ids=["declared", "streamed"])
def test_bounded_fetch_refuses_a_big_body_while_it_streams(declared):
    big = Fault(kind="big", size_bytes=FIFTY_MB, declare_length=declared)
    with (ReplayServer(SNAPSHOT_DIR, faults={RECORDED_GET: [big]}) as server,
          pytest.raises(ResponseTooLarge) as refused):
        bounded_fetch(replay_url(server.url, RECORDED_GET), "GET", None, MAX_SIZE, 30)
    assert refused.value.size > MAX_SIZE
    served = server.served
    assert [s.kind for s in served] == ["big"]
    assert served[0].bytes_sent < FIFTY_MB            # hung up long before the end


def test_bounded_fetch_returns_the_recorded_body_and_follows_no_redirect():
    recorded = RECORDED_FILE.read_bytes()
    with ReplayServer(SNAPSHOT_DIR,
                      faults={IDC_URL: [Fault(kind="redirect_loop")]}) as server:
        status, headers, body = bounded_fetch(replay_url(server.url, RECORDED_GET), "GET", None,
                                              MAX_SIZE, 30)
        assert (status, body) == (200, recorded)
        assert "X-Gpuprices-Captured-At" in headers
        status, headers, _ = bounded_fetch(replay_url(server.url, IDC_URL), "GET", None,
                                           MAX_SIZE, 30)
        assert status == 302 and headers["Location"] == IDC_URL
        with pytest.raises(ResponseTooLarge):                  # the limit is the caller's
            bounded_fetch(replay_url(server.url, RECORDED_GET), "GET", None, len(recorded) - 1,
                          30)


# --- the raw archive middleware: a write that fails, a rendered page over the limit -------------

def archive_middleware(data_dir: Path, **settings) -> tuple[RawArchiveMiddleware, object]:
    cls = spider_class(IDC)
    crawler = get_crawler(cls, {"GPUPRICES_DATA_DIR": str(data_dir), **settings})
    crawler.spider = cls.from_crawler(crawler, crawl_id="t")
    return RawArchiveMiddleware.from_crawler(crawler), crawler


def page(url: str = IDC_URL, body: bytes = b"<html>ok</html>", **meta) -> tuple:
    request = Request(url, meta=meta)
    return request, HtmlResponse(url=url, body=body, request=request)


def test_a_failed_archive_write_fails_the_crawl_naming_url_and_error(tmp_path):
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "objects").write_text("a file where the archive's folder should be")
    middleware, crawler = archive_middleware(tmp_path)
    with pytest.raises(IgnoreRequest, match="raw archive write failed"):
        middleware.process_response(*page())
    reason = crawler.stats.get_value(FAILED_BECAUSE)
    assert reason.startswith(f"raw archive write failed for {IDC_URL}: [Errno")
    assert "objects" in reason


def test_a_written_archive_passes_the_response_on(tmp_path):
    middleware, crawler = archive_middleware(tmp_path)
    request, response = page()
    assert middleware.process_response(request, response) is response
    digest = hashlib.sha256(response.body).hexdigest()
    stored = tmp_path / "raw" / "objects" / digest[:2] / f"{digest}.gz"
    assert gzip.decompress(stored.read_bytes()) == response.body
    assert crawler.stats.get_value(FAILED_BECAUSE) is None


def test_a_rendered_page_over_the_limit_is_refused(tmp_path):
    middleware, crawler = archive_middleware(tmp_path, DOWNLOAD_MAXSIZE=1000)
    with pytest.raises(IgnoreRequest):
        middleware.process_response(*page(body=b"x" * 1001, playwright=True))
    assert crawler.stats.get_value(FAILED_BECAUSE) == \
        f"response over 1000 bytes (DOWNLOAD_MAXSIZE): {IDC_URL}"
    assert not (tmp_path / "raw" / "objects").exists()       # not archived
    # at the limit it passes; a plain download is limited by Scrapy's own handler before this
    request, response = page(body=b"x" * 1000, playwright=True)
    assert middleware.process_response(request, response) is response


def test_a_failed_archive_write_fails_a_real_crawl(tmp_path):
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "objects").write_text("not a folder")
    fetch_log = tmp_path / "raw" / "fetches" / IDC / "test.jsonl"
    fetch_log.parent.mkdir(parents=True)
    fetch_log.touch()                              # run_crawl reads it; nothing gets written
    with ReplayServer(SNAPSHOT_DIR) as server:
        offers, verdict = run_crawl(IDC, server.url, tmp_path)
    assert not verdict["passed"]
    assert "raw archive write failed for https://www.sinnet.com.cn/" in failure_text(verdict)
    assert verdict["fetches"] == [] and offers == []


# --- Chromium: the page's 50 MB XHR is refused, the crawl fails naming it -----------------------

@pytest.fixture(scope="module")
def gcp_crawls(tmp_path_factory) -> dict[str, tuple]:
    # gcp's page, a test-only copy whose script draws the tables from an XHR (gcp_xhr_page.py)
    snapshots = scripted_snapshots(tmp_path_factory.mktemp("scripted"))
    crawls = {}
    for name, faults in (
            ("clean", []),
            ("declared", [Fault(kind="big", size_bytes=FIFTY_MB, declare_length=True)] * 3),
            ("streamed", [Fault(kind="big", size_bytes=FIFTY_MB, declare_length=False)] * 3)):
        data_dir = tmp_path_factory.mktemp(name)
        with (ReplayServer(snapshots, faults={TABLES_XHR: faults} if faults else {}) as server,
              pytest.MonkeyPatch.context() as env):
            env.delenv("GCP_API_KEY", raising=False)   # keyless: the rendered page path
            # a refused XHR leaves the table unrendered: fail after 3 s of waiting, not 20
            settings = ("RENDER_WAIT_TIMEOUT=3",) if faults else ()
            offers, verdict = run_crawl("gcp", server.url, data_dir, *settings)
            crawls[name] = (offers, verdict, server.served, data_dir)
    crawls["recorded xhr body"] = (snapshots / "gcp" / TABLES_FILE).read_bytes()
    return crawls


@pytest.mark.parametrize("how", ["declared", "streamed"])
def test_a_fifty_mb_xhr_is_refused_and_fails_the_crawl_naming_it(gcp_crawls, how):
    offers, verdict, served, _ = gcp_crawls[how]
    assert offers == [] and not verdict["passed"]
    assert f"response over {MAX_SIZE} bytes (DOWNLOAD_MAXSIZE): {TABLES_XHR}" in \
        failure_text(verdict)
    assert [s.kind for s in served] == ["big"]          # refused once, not retried
    assert served[0].bytes_sent < FIFTY_MB              # hung up long before the end
    assert all(f["size"] <= MAX_SIZE for f in verdict["fetches"])
    assert TABLES_XHR not in {f["url"] for f in verdict["fetches"]}


def test_an_accepted_xhr_is_archived_for_replay(gcp_crawls):
    offers, verdict, _, data_dir = gcp_crawls["clean"]
    assert verdict["passed"], verdict["failures"]
    assert offers
    [xhr] = [f for f in verdict["fetches"] if f["url"] == TABLES_XHR]
    assert xhr["status"] == 200 and xhr["headers"].get("X-Gpuprices-Captured-At")
    stored = data_dir / "raw" / "objects" / xhr["sha256"][:2] / f"{xhr['sha256']}.gz"
    recorded = gcp_crawls["recorded xhr body"]
    assert gzip.decompress(stored.read_bytes()) == recorded


# --- live mode: the page's data requests go through Playwright's fetch, held to the same rules ---

LIVE_PAGE = b"""<html><body><div id=out>waiting</div><script>
Promise.all(["/small", "/big", "/missing"].map(u => fetch(u)
    .then(r => r.text().then(t => u + ":" + r.status + ":" + t.length))
    .catch(() => u + ":failed")))
  .then(parts => { document.getElementById("out").textContent = parts.join(" "); });
</script></body></html>"""
LIVE_BODIES = {"/": LIVE_PAGE, "/small": b'{"ok": 1}', "/big": b"x" * 3000}


class _LiveSite(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = LIVE_BODIES.get(self.path, b"gone")
        self.send_response(200 if self.path in LIVE_BODIES else 404)
        self.send_header("Content-Type", "text/html" if self.path == "/" else "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


async def _render_live(url: str, route: PageRoute) -> str:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=os.environ.get("GPUPRICES_CHROMIUM", "/usr/bin/chromium"),
            args=CHROMIUM_ARGS, timeout=30_000)
        try:
            page = await browser.new_page()
            await route.install(page, None)
            await page.goto(url, timeout=20_000)
            await page.wait_for_function("document.getElementById('out').textContent "
                                         "!== 'waiting'", timeout=20_000)
            return await page.text_content("#out")
        finally:
            await browser.close()


def test_live_mode_route_limits_archives_and_names_failed_requests(tmp_path):
    site = ThreadingHTTPServer(("127.0.0.1", 0), _LiveSite)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{site.server_address[1]}"
    cls = spider_class("gcp")
    crawler = get_crawler(cls, {"GPUPRICES_DATA_DIR": str(tmp_path), "DOWNLOAD_MAXSIZE": 2000})
    route = PageRoute(cls.from_crawler(crawler, crawl_id="t"), replay_base=None)
    try:
        seen = asyncio.run(_render_live(f"{base}/", route))
    finally:
        site.shutdown()
        site.server_close()
    # the page got the small body and the 404, and a failed request for the big one
    assert seen == "/small:200:9 /big:failed /missing:404:4"
    assert crawler.stats.get_value(FAILED_BECAUSE) == \
        f"response over 2000 bytes (DOWNLOAD_MAXSIZE): {base}/big"
    assert sorted(crawler.stats.get_value(FAILED_SUBREQUESTS)) == [
        f"HTTP 404 {base}/missing", f"over 2000 bytes {base}/big"]
    fetches = [json.loads(line) for line in
               (tmp_path / "raw" / "fetches" / "gcp" / "t.jsonl").read_text().splitlines()]
    assert sorted((f["url"], f["status"], f["size"]) for f in fetches) == [
        (f"{base}/missing", 404, 4), (f"{base}/small", 200, 9)]   # the page itself: the DOM later
