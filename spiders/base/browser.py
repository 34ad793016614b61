"""What Chromium fetches for a rendered page: the same size limit and archive as a plain download,
and the page's failed requests named.

A Playwright route (installed by the page-init callback) sees every request of the page:
  replay  every request is answered from the replay server by a bounded fetch on loopback: a
          body over DOWNLOAD_MAXSIZE is refused while it streams (declared or not), never held.
  live    the page's data requests (XHR / fetch) are fetched by Playwright (`route.fetch`, with
          the browser context's cookies) and refused above DOWNLOAD_MAXSIZE before the page sees
          them (Playwright's driver holds such a body first); scripts, styles and the page itself
          go through the browser untouched (the rendered page is held to the limit by the raw
          archive middleware).
A body over the limit fails the crawl at once, naming the URL. Every data response the page
receives is archived before the page sees it, so `--from-raw` can replay it; an archive that
cannot be written fails the crawl. A data request that fails (HTTP error status, connection error)
is listed with its URL in the `chromium/failed_subrequests` stat and the log; it fails the crawl
only when its page then fails to render (`render_failed`): a page may shrug off a failed tracker
call, and the verdict should name the request that broke the page rather than the selector wait
that timed out.
"""

from __future__ import annotations

import asyncio
import http.client
from typing import Any
from urllib.parse import urlsplit

from scrapy import Spider

from spiders.middlewares.crawl_failure import fail_crawl, oversize_reason
from spiders.middlewares.raw_archive import archive_or_fail
from spiders.replay_server import replay_url

DATA_REQUESTS = ("xhr", "fetch")
FAILED_SUBREQUESTS = "chromium/failed_subrequests"   # stats: ["HTTP 503 <url>", ...]
LISTED_FAILURES = 20                                 # the list stops growing here; the count not
# the body is handed over whole and decoded: its framing headers are the browser's to redo
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-encoding",
               "content-length"}
_CHUNK = 64 * 1024


class ResponseTooLarge(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(f"{size} bytes or more")
        self.size = size


def bounded_fetch(url: str, method: str, body: bytes | None, max_size: int,
                  timeout: float) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of one plain-HTTP request, no redirect followed; a body over
    `max_size` bytes (0: no limit) raises ResponseTooLarge as soon as that shows."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout or None)
    try:
        conn.request(method, f"{parts.path}?{parts.query}", body=body)
        response = conn.getresponse()
        declared = response.getheader("Content-Length") or ""
        if max_size and declared.isdigit() and int(declared) > max_size:
            raise ResponseTooLarge(int(declared))
        chunks, size = [], 0
        while chunk := response.read(_CHUNK):
            size += len(chunk)
            if max_size and size > max_size:
                raise ResponseTooLarge(size)
            chunks.append(chunk)
        headers: dict[str, str] = {}
        for name, value in response.getheaders():
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        return response.status, headers, b"".join(chunks)
    finally:
        conn.close()


class PageRoute:
    """The route of one spider's rendered pages (one instance per spider, shared by its pages)."""

    def __init__(self, spider: Spider, replay_base: str | None) -> None:
        self.spider = spider
        self.replay_base = replay_base
        self.max_size = spider.settings.getint("DOWNLOAD_MAXSIZE")
        self.timeout = spider.settings.getfloat("DOWNLOAD_TIMEOUT")

    async def install(self, page, request) -> None:
        await page.route("**/*", self.handle)

    async def handle(self, route, pw_request) -> None:
        url, is_data = pw_request.url, pw_request.resource_type in DATA_REQUESTS
        if self.replay_base is None and not is_data:
            await route.continue_()
            return
        try:
            if self.replay_base is not None:
                status, headers, body = await asyncio.to_thread(
                    bounded_fetch, replay_url(self.replay_base, url), pw_request.method,
                    pw_request.post_data_buffer, self.max_size, self.timeout)
            else:
                status, headers, body = await self._live_fetch(route)
        except ResponseTooLarge:
            await route.abort("failed")
            self.failed(url, f"over {self.max_size} bytes")
            fail_crawl(self.spider.crawler, oversize_reason(self.max_size, url))
            return
        except Exception as exc:   # refused, reset, timed out: the page sees a failed request
            await route.abort("failed")
            if is_data:
                self.failed(url, type(exc).__name__)
            return
        if is_data:
            if status >= 400:
                self.failed(url, f"HTTP {status}")
            if not archive_or_fail(self.spider, url=url, method=pw_request.method,
                                   status=status, headers=headers, body=body,
                                   request_body=pw_request.post_data_buffer):
                await route.abort("failed")
                return
        await route.fulfill(status=status, body=body,
                            headers={k: v for k, v in headers.items()
                                     if k.lower() not in _HOP_BY_HOP})

    async def _live_fetch(self, route) -> tuple[int, dict[str, str], bytes]:
        upstream = await route.fetch(max_redirects=0, timeout=self.timeout * 1000)
        try:
            declared = upstream.headers.get("content-length", "")
            if self.max_size and declared.isdigit() and int(declared) > self.max_size:
                raise ResponseTooLarge(int(declared))
            body = await upstream.body()
            if self.max_size and len(body) > self.max_size:
                raise ResponseTooLarge(len(body))
            return upstream.status, dict(upstream.headers), body
        finally:
            await upstream.dispose()

    def failed(self, url: str, what: str) -> None:
        """Count and list one failed data request of a page."""
        stats: Any = self.spider.crawler.stats
        listed = list(stats.get_value(FAILED_SUBREQUESTS) or [])
        if len(listed) < LISTED_FAILURES:
            stats.set_value(FAILED_SUBREQUESTS, [*listed, f"{what} {url}"])
        stats.inc_value("chromium/failed_subrequest_count")
        self.spider.logger.error("%s: the page's request failed (%s): %s",
                                 self.spider.name, what, url)


def render_failed(spider: Spider, failure) -> None:
    """Errback of a rendered page: the download failure is counted by Scrapy as usual; when the
    page's own requests failed first, the crawl fails naming them (the likely cause)."""
    url = failure.request.url if hasattr(failure, "request") else "a page"
    spider.logger.error("%s: %s did not render: %s", spider.name, url, failure.getErrorMessage())
    failed = spider.crawler.stats.get_value(FAILED_SUBREQUESTS)
    if failed:
        fail_crawl(spider.crawler, f"{url} did not render after its page's requests failed: "
                                   + "; ".join(failed[:3]))
