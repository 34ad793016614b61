"""Serve requests from recorded snapshots instead of the vendor's site.

Switched on by one setting, GPUPRICES_REPLAY_URL (the replay server's base URL). Spiders keep
requesting the vendor's real URL: plain HTTP requests are redirected to the loopback replay
server here, and `response.url` is set back to the live URL so `urljoin`, ids and the raw archive
match a live run. Requests rendered by Chromium are answered inside the browser by the page
route of spiders/base/browser.py, so the page's own XHR/fetch calls are replayed as well.
"""

from __future__ import annotations

import os

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.utils.httpobj import urlparse_cached

from spiders.replay_server import replay_url

LIVE_URL_META = "gpuprices_live_url"


def replay_base_url(settings) -> str | None:
    return settings.get("GPUPRICES_REPLAY_URL") or os.environ.get("GPUPRICES_REPLAY_URL") or None


class ReplayMiddleware:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ReplayMiddleware:
        base_url = replay_base_url(crawler.settings)
        if not base_url:
            raise NotConfigured("live crawl: GPUPRICES_REPLAY_URL is not set")
        return cls(base_url)

    def process_request(self, request: Request) -> Request | None:
        if request.meta.get("playwright") or request.url.startswith(self.base_url):
            return None
        return request.replace(
            url=replay_url(self.base_url, request.url),
            # robots.txt was already asked of the live URL; the loopback URL needs no second ask.
            # the vendor host's download slot, as live: not one loopback slot for every source
            meta={**request.meta, LIVE_URL_META: request.url, "dont_obey_robotstxt": True,
                  "download_slot": (request.meta.get("download_slot")
                                    or urlparse_cached(request).hostname)},
            dont_filter=True,
        )

    def process_response(self, request: Request, response: Response) -> Response:
        return response


class RestoreLiveUrlMiddleware:
    """Runs before RedirectMiddleware: a relative Location resolves against the live URL."""

    def process_response(self, request: Request, response: Response) -> Response:
        live_url = request.meta.get(LIVE_URL_META)
        return response.replace(url=live_url) if live_url and response.url != live_url else response
