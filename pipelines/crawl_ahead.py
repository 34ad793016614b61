"""The crawl of a `gpuprices run`, started before its Dagster run and taken by its crawl step.

Crawling is most of a run, and it happens in Scrapy subprocesses: the command's own process only
waits for them. Before the crawl step could start them, that process spent seconds loading Dagster
and the code location, making the instance and planning the run. So `gpuprices run` (in process,
after its preflight check passed and with the run lock held) starts the crawl step's very call,
`crawl_many` with the step's crawl ids and the crawler's settings (pipelines/crawler.py, which
needs no Dagster), on a thread first; the step (`raw_offers`, pipelines/defs/ingest.py) takes its
results when it is the same run, the same sources and the same crawler settings, and what the
crawl said to its log is said again to the step's.

Any other run (a schedule's, the UI's, the multiprocess executor's, a test materializing the
step) finds nothing here and crawls in the step, as it always did."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any


def crawl_id(source: str, run_id: str) -> str:
    """A crawl's id: its source, when it started, and the run id's first 8 characters (the live
    view finds the run's verdicts by them, pipelines/cli/run_progress.py)."""
    return f"{source}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}-{run_id[:8]}"


@dataclass
class HeldLog:
    """A log for crawl_many while no step is there to hear it; `say_to` repeats it to one."""

    lines: list[tuple[str, str]] = field(default_factory=list)

    def info(self, message: str) -> None:
        self.lines.append(("info", message))

    def warning(self, message: str) -> None:
        self.lines.append(("warning", message))

    def error(self, message: str) -> None:
        self.lines.append(("error", message))

    def say_to(self, log: Any) -> None:
        for level, message in self.lines:
            getattr(log, level)(message)


@dataclass
class CrawlAhead:
    run_id: str
    jobs: dict[str, str]      # source -> crawl id
    crawler: Any              # the Crawler (or CrawlerResource) it crawls with
    log: HeldLog
    results: Future


_ahead: dict[str, CrawlAhead] = {}
_lock = threading.Lock()


def start(run_id: str, sources: list[str], crawler: Any = None) -> None:
    """Start crawling `sources` for the run `run_id` on a thread, with `crawler` (by default the
    one the code location will make from this environment)."""
    jobs = {source: crawl_id(source, run_id) for source in sources}
    log = HeldLog()
    if crawler is None:   # no Dagster: the crawl starts before it has loaded
        from pipelines.crawler import Crawler, settings_from_env

        crawler = Crawler(**settings_from_env())
    # What the crawl would import on its thread is imported here first: this thread goes on to
    # import Dagster, and two threads importing at once can meet a half-made module.
    import spiders.terms  # noqa: F401  (a live crawl's terms check imports it when called)
    def crawl() -> dict:
        started = time.monotonic()
        results = crawler.crawl_many(jobs, log)
        log.info(f"crawled {len(jobs)} sources in {time.monotonic() - started:.1f} s, from "
                 "before the Dagster run started")
        return results

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="crawl-ahead")
    results = pool.submit(crawl)
    pool.shutdown(wait=False)   # the thread ends with the crawl; the process waits for it
    with _lock:
        _ahead[run_id] = CrawlAhead(run_id, jobs, crawler, log, results)


def take(run_id: str, sources: list[str], crawler: Any) -> CrawlAhead | None:
    """The crawl started ahead for this run, if it crawls exactly `sources` with the same
    crawler settings as `crawler` (the step's); once only. One that does not match is waited
    for (its processes must not outlive the run) and then left: the step crawls itself."""
    with _lock:
        ahead = _ahead.pop(run_id, None)
    if ahead is None:
        return None
    if set(ahead.jobs) != set(sources) or _settings(ahead.crawler) != _settings(crawler):
        ahead.results.exception()
        return None
    return ahead


def _settings(crawler: Any) -> dict[str, Any]:
    from pipelines.crawler import SETTINGS

    return {name: getattr(crawler, name, None) for name in SETTINGS}
