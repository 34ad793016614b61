"""Several sources in one Scrapy process: one crawler per source on one Twisted reactor, and the
Chromium sources sharing one browser.

`python -m spiders.crawl_many '<jobs JSON>'`, where the JSON is a list of
`{"source", "crawl_id", "items", "settings"}`: each source keeps what `scrapy crawl <source>`
gives it (its own items file, its monitor verdict in data/raw/crawls/<source>/<crawl_id>.json,
its own settings and custom_settings); `settings` are per-source overrides at command-line
priority (the caller's time limit, CLOSESPIDER_TIMEOUT, goes there). A source that fails or runs
out of time closes alone; the others go on. Like `scrapy crawl`, the process exits 0 whatever the
crawls did: verdicts come from the monitor files.

The replay server, the data directory and the rest come from the environment, as for
`scrapy crawl` (spiders/settings.py). pipelines/resources.py runs one process for the plain-HTTP
sources and one for the Chromium sources, and retries alone what a dead process left unfinished.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any

from scrapy import signals
from scrapy.crawler import AsyncCrawlerProcess, Crawler
from scrapy.exceptions import NotSupported
from scrapy.settings import Settings
from scrapy.utils.project import get_project_settings

from spiders.registry import spider_class

log = logging.getLogger(__name__)

# Test hook: the process dies (os._exit, no clean-up, like a crash or a kill) once this many of
# its crawls have finished, so tests can prove what a dead shared process leaves is retried.
EXIT_AFTER_ENV = "GPUPRICES_CRAWL_MANY_EXIT_AFTER"
EXIT_CODE_TEST_HOOK = 70


class SharedChromium:
    """One Playwright driver and one Chromium for every crawler of the process; launched by the
    first crawler that needs it (with that crawler's launch options, the same for every source:
    spiders/settings.py), relaunched if it died, closed once every crawl has finished."""

    def __init__(self) -> None:
        self._manager = None
        self._playwright = None
        self._browser = None
        self._lock: asyncio.Lock | None = None

    async def browser(self, launch_options: dict):
        from playwright.async_api import PlaywrightContextManager

        self._lock = self._lock or asyncio.Lock()
        async with self._lock:
            if self._playwright is None:
                self._manager = PlaywrightContextManager()
                self._playwright = await self._manager.start()
            if self._browser is None or not self._browser.is_connected():
                self._browser = await self._playwright.chromium.launch(**launch_options)
                log.info("shared Chromium launched")
            return self._browser

    async def close(self) -> None:
        if self._browser is not None and self._browser.is_connected():
            await self._browser.close()
        if self._manager is not None:
            await self._manager.__aexit__()
        self._manager = self._playwright = self._browser = None


SHARED_CHROMIUM = SharedChromium()


class BrowserLease:
    """One crawler's handle on the shared browser. scrapy-playwright closes its browser when its
    crawler ends; closing a lease only drops that crawler's listeners (its contexts are closed by
    the handler), so the browser stays up for the other crawlers."""

    def __init__(self, browser) -> None:
        self._browser = browser
        self._listeners: list[tuple[str, Any]] = []

    def on(self, event: str, callback) -> None:
        self._browser.on(event, callback)
        self._listeners.append((event, callback))

    def is_connected(self) -> bool:
        return self._browser.is_connected()

    async def new_context(self, **kwargs):
        return await self._browser.new_context(**kwargs)

    async def close(self) -> None:
        for event, callback in self._listeners:
            self._browser.remove_listener(event, callback)
        self._listeners.clear()


class SharedBrowserProvider:
    """scrapy-playwright's PLAYWRIGHT_BROWSER_PROVIDER: every crawler gets a lease on the one
    shared Chromium instead of starting its own driver and browser."""

    def __init__(self, config) -> None:
        self.config = config

    async def start(self) -> None:
        pass

    async def launch_browser(self) -> BrowserLease:
        return BrowserLease(await SHARED_CHROMIUM.browser(self.config.launch_options))

    async def launch_persistent_context(self, context_kwargs: dict):
        raise NotSupported("persistent contexts are not shared between crawlers")

    async def close(self) -> None:
        pass


def crawler_settings(project: Settings, job: dict) -> Settings:
    """The project settings plus this source's: its items file (as `-O <items>:jsonlines`) and
    its overrides, at command-line priority (above the spider's custom_settings, as `-s`)."""
    settings = project.copy()
    settings.set("FEEDS", {job["items"]: {"format": "jsonlines", "overwrite": True}},
                 priority="cmdline")
    if spider_class(job["source"]).render_js:
        settings.set("PLAYWRIGHT_BROWSER_PROVIDER", f"{__name__}.SharedBrowserProvider",
                     priority="cmdline")
    for name, value in (job.get("settings") or {}).items():
        settings.set(name, value, priority="cmdline")
    return settings


def without_spider_loader(project: Settings) -> Settings:
    """The process's own settings: its crawlers are handed their spider classes (spider_class
    imports only each job's module), so it needs no spider loader, and Scrapy's default one
    imports every module of SPIDER_MODULES, every vendor SDK with them, when the process starts
    (about 3.5 s of CPU on each of the run's two crawl processes, both starting as the run does)."""
    settings = project.copy()
    settings.set("SPIDER_LOADER_CLASS", "scrapy.spiderloader.DummySpiderLoader",
                 priority="cmdline")
    return settings


def _exit_after_hook(crawlers: list[Crawler]) -> None:
    limit = int(os.environ.get(EXIT_AFTER_ENV) or 0)
    if not limit:
        return
    finished = []

    def engine_stopped() -> None:  # after the spider closed: its verdict is on disk
        finished.append(1)
        if len(finished) >= limit:
            log.error("test hook %s=%d: exiting now", EXIT_AFTER_ENV, limit)
            logging.shutdown()
            os._exit(EXIT_CODE_TEST_HOOK)

    for crawler in crawlers:
        # weak=False: the dispatcher would otherwise drop this closure at once
        crawler.signals.connect(engine_stopped, signal=signals.engine_stopped, weak=False)


def crawl_many(jobs: list[dict]) -> None:
    """Crawl every job's source in this process, concurrently; returns when all have ended."""
    project = get_project_settings()
    process = AsyncCrawlerProcess(without_spider_loader(project))
    crawlers = [Crawler(spider_class(job["source"]), crawler_settings(project, job))
                for job in jobs]
    _exit_after_hook(crawlers)

    async def crawl_all() -> None:
        tasks = [process.crawl(crawler, crawl_id=job["crawl_id"])
                 for crawler, job in zip(crawlers, jobs, strict=True)]
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        for job, outcome in zip(jobs, outcomes, strict=True):
            if isinstance(outcome, BaseException):  # no verdict: the caller retries it alone
                log.error("crawl of %s raised %r", job["source"], outcome)
        await SHARED_CHROMIUM.close()

    from twisted.internet import reactor

    def stop(_task) -> None:
        if reactor.running:
            reactor.stop()

    asyncio.get_event_loop().create_task(crawl_all()).add_done_callback(stop)
    process.start(stop_after_crawl=False)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.exit("usage: python -m spiders.crawl_many "
                 "'[{\"source\": ..., \"crawl_id\": ..., \"items\": ..., \"settings\": {...}}]'")
    crawl_many(json.loads(args[0]))


if __name__ == "__main__":
    main()
