"""The probe of `gpuprices check-sources`, run in a subprocess of its own per source
(`python -m pipelines.cli.source_probe SOURCE DATA_DIR RESULT_PATH TIMEOUT`): a Scrapy crawl of the
source's spider limited to one page of offers, whose facts (offers, missing fields, parse errors,
the page's HTTP status or download error) are written as JSON to RESULT_PATH for the command to
judge (pipelines/cli/check_sources.py).

The project's settings, with no retries, no raw archive and no crawl monitor; all writes under
DATA_DIR. A Twisted reactor cannot restart, hence one process per probe.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib.parse import urlsplit

# The limits the command sets (it computes the subprocess's deadline from them too).
from pipelines.cli.check_sources import MAX_REQUESTS, PROBE_MODULE, STARTUP_ALLOWANCE_SECONDS

RESULT_SETTING = "GPUPRICES_CHECK_RESULT"
STAT = "check_sources/"         # prefix of the probe's own crawl stats
SIBLINGS_META = "check_sources_sibling_pages"


def _is_robots_txt(request) -> bool:
    live_url = request.meta.get("gpuprices_live_url", request.url)
    return urlsplit(live_url).path == "/robots.txt"


class _WithStats:
    def __init__(self, stats) -> None:
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.stats)


class OnePageOfOffers(_WithStats):
    """Spider middleware: the probe reads one page of offers, one request at a time. The first
    start request goes out; a page that yields offers ends the probe (its other requests, e.g. a
    next page, are counted, not fetched); a page that yields only requests, an index such as
    RunPod's list of places, lets its first one go out, up to MAX_REQUESTS in all."""

    def __init__(self, stats) -> None:
        super().__init__(stats)
        self.sent = 0

    def _first_of(self, requests: list) -> list:
        """The first of the requests a page (or the start) yields, while the budget lasts; each
        page records how many pages of its kind the full crawl fetches at that step."""
        if not requests:
            return []
        chosen = requests[:1] if self.sent < MAX_REQUESTS else []
        self.stats.inc_value(f"{STAT}pages_not_fetched", len(requests) - len(chosen))
        for request in chosen:
            self.sent += 1
            request.meta[SIBLINGS_META] = len(requests)
            self.stats.set_value(f"{STAT}page_url", request.url)
            self.stats.set_value(f"{STAT}requests", self.sent)
        return chosen

    def _after_page(self, response, offers: int, requests: list) -> list:
        if not offers:
            return self._first_of(requests)
        self.stats.set_value(f"{STAT}sibling_pages", response.meta.get(SIBLINGS_META, 1))
        self.stats.inc_value(f"{STAT}pages_not_fetched", len(requests))
        return []

    @staticmethod
    async def _offers(result, requests: list):
        """The offers of `result`, its requests set aside in `requests`."""
        from scrapy import Request

        async for item_or_request in result:
            if isinstance(item_or_request, Request):
                requests.append(item_or_request)
            else:
                yield item_or_request

    async def process_start(self, start):
        requests = []
        async for offer in self._offers(start, requests):
            yield offer
        for request in self._first_of(requests):
            yield request

    async def process_spider_output(self, response, result):
        requests, offers = [], 0
        async for offer in self._offers(result, requests):
            offers += 1
            yield offer
        for request in self._after_page(response, offers, requests):
            yield request


class PageOutcome(_WithStats):
    """Downloader middleware next to the downloader: the page's HTTP status, or the exception that
    ended its download (a timeout, a refused connection), before anything retries or hides it."""

    def process_response(self, request, response):
        if not _is_robots_txt(request):
            self.stats.set_value(f"{STAT}page_status", response.status)
        return response

    def process_exception(self, request, exception):
        if not _is_robots_txt(request):
            message = (str(exception).strip().splitlines() or [""])[0][:300]
            self.stats.set_value(f"{STAT}page_error", f"{type(exception).__name__}: {message}")


class ProbeReport:
    """Extension: counts the offers and their missing required fields, collects parse errors, and
    writes what happened to the file named by the GPUPRICES_CHECK_RESULT setting."""

    def __init__(self, crawler) -> None:
        self.crawler = crawler
        self.offers = 0
        self.missing: dict[str, int] = {}
        self.parse_errors: list[str] = []

    @classmethod
    def from_crawler(cls, crawler) -> ProbeReport:
        from scrapy import signals

        report = cls(crawler)
        crawler.signals.connect(report.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(report.spider_error, signal=signals.spider_error)
        crawler.signals.connect(report.spider_closed, signal=signals.spider_closed)
        return report

    def item_scraped(self, item, response, spider) -> None:
        from spiders.items import missing_fields  # the crawl monitor's own rule

        self.offers += 1
        for name in missing_fields(item):
            self.missing[name] = self.missing.get(name, 0) + 1

    def spider_error(self, failure, response, spider) -> None:
        self.parse_errors.append(f"{failure.type.__name__}: {failure.getErrorMessage()}"[:500])

    def spider_closed(self, spider, reason) -> None:
        stats = self.crawler.stats
        facts = {"offers": self.offers, "min_offers": getattr(spider, "min_offers", 1),
                 "missing": self.missing, "parse_errors": self.parse_errors,
                 "finish_reason": reason,
                 "robots_forbidden": stats.get_value("robotstxt/forbidden", 0),
                 **{key[len(STAT):]: value for key, value in stats.get_stats().items()
                    if key.startswith(STAT)}}
        Path(self.crawler.settings[RESULT_SETTING]).write_text(json.dumps(facts),
                                                                encoding="utf-8")


def probe_settings(data_dir: Path, result_path: Path, timeout_seconds: float):
    """The project's settings (User-Agent, robots.txt, replay, Playwright) for a one-page probe:
    no retries, no raw archive, no crawl monitor, all writes under `data_dir`."""
    from scrapy.settings import Settings

    settings = Settings()
    settings.setmodule("spiders.settings", priority="project")
    middlewares = {**settings.getdict("DOWNLOADER_MIDDLEWARES"),
                   "spiders.middlewares.raw_archive.RawArchiveMiddleware": None,
                   f"{PROBE_MODULE}.PageOutcome": 990}
    extensions = {**settings.getdict("EXTENSIONS"),
                  "spiders.extensions.monitors.OfferMonitor": None,
                  f"{PROBE_MODULE}.ProbeReport": 500}
    # "cmdline" outranks the "spider" priority of a spider's own settings (Playwright's timeouts).
    settings.setdict({
        "DOWNLOADER_MIDDLEWARES": middlewares, "EXTENSIONS": extensions,
        "SPIDER_MIDDLEWARES": {f"{PROBE_MODULE}.OnePageOfOffers": 25},
        "RETRY_ENABLED": False, "DOWNLOAD_TIMEOUT": timeout_seconds, "DNS_TIMEOUT": timeout_seconds,
        "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": timeout_seconds * 1000,
        "CLOSESPIDER_TIMEOUT": (1 + MAX_REQUESTS) * timeout_seconds + STARTUP_ALLOWANCE_SECONDS,
        "GPUPRICES_DATA_DIR": str(data_dir), RESULT_SETTING: str(result_path),
        "LOG_LEVEL": "ERROR",
    }, priority="cmdline")
    return settings


def run_probe(source: str, data_dir: Path, result_path: Path, timeout_seconds: float) -> None:
    """Crawl one page of `source` in this process (the reactor cannot be restarted after)."""
    from scrapy.crawler import CrawlerProcess

    process = CrawlerProcess(probe_settings(data_dir, result_path, timeout_seconds))
    process.crawl(source, crawl_id="check-sources")
    process.start()


if __name__ == "__main__":  # the probe of one source: SOURCE DATA_DIR RESULT_PATH TIMEOUT
    _source, _data_dir, _result, _timeout = sys.argv[1:5]
    run_probe(_source, Path(_data_dir), Path(_result), float(_timeout))
