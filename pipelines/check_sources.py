"""`gpuprices check-sources`: does each vendor's page still have the shape its spider reads?

For the day a vendor changes its page. One page of offers per source is fetched (politely: the
project's settings, so its User-Agent and robots.txt; no retries; a timeout; one request at a time,
a second only when the first page is an index) and read by the spider's own parse callbacks; the
offers are checked as the crawl monitor checks a crawl (required fields, at least the source's
`min_offers`, or its share on one page). Nothing is written to the database or the raw archive: the
probe runs with the archive middleware and the monitor switched off, in a temporary data directory
deleted afterwards. Without `--live` the bundled snapshots are replayed on loopback, so the command
works offline and in tests. docs/check-sources.md has the details.

Each probe is a crawl in a subprocess of its own (`python -m pipelines.check_sources`), as in the
pipeline: a Twisted reactor cannot restart, and a hung probe is ended by the subprocess's deadline.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import click

from spiders.layout import REPO_ROOT, SNAPSHOT_DIR

EXIT_OK, EXIT_CHANGED = 0, 1
DEFAULT_TIMEOUT_SECONDS = 30   # spiders/settings.py DOWNLOAD_TIMEOUT
PARALLEL_PROBES = 4            # as many crawl subprocesses at a time as the pipeline runs
# Beyond its downloads (robots.txt and at most MAX_REQUESTS pages, each bounded by the timeout),
# what a probe may take to start Python and Scrapy, and Chromium for rendered pages.
STARTUP_ALLOWANCE_SECONDS = 60
RESULT_SETTING = "GPUPRICES_CHECK_RESULT"
STAT = "check_sources/"         # prefix of the probe's own crawl stats
MODULE = "pipelines.check_sources"  # not __name__: the probe runs it as __main__
SIBLINGS_META = "check_sources_sibling_pages"
# A source whose first page is an index (RunPod: the places, then prices per place) needs a
# second request to reach offers; the probe never sends more than this many.
MAX_REQUESTS = 3

MATCHES, CHANGED, FETCH_FAILED, SKIPPED = "matches", "changed", "fetch failed", "skipped"


# Inside the probe's subprocess: a Scrapy crawl limited to one page of offers, and its facts

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
    def from_crawler(cls, crawler) -> "ProbeReport":
        from scrapy import signals

        report = cls(crawler)
        crawler.signals.connect(report.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(report.spider_error, signal=signals.spider_error)
        crawler.signals.connect(report.spider_closed, signal=signals.spider_closed)
        return report

    def item_scraped(self, item, response, spider) -> None:
        from spiders.items import missing_fields   # the crawl monitor's own rule

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
                   f"{MODULE}.PageOutcome": 990}
    extensions = {**settings.getdict("EXTENSIONS"),
                  "spiders.extensions.monitors.OfferMonitor": None, f"{MODULE}.ProbeReport": 500}
    # "cmdline" outranks the "spider" priority of a spider's own settings (Playwright's timeouts).
    settings.setdict({
        "DOWNLOADER_MIDDLEWARES": middlewares, "EXTENSIONS": extensions,
        "SPIDER_MIDDLEWARES": {f"{MODULE}.OnePageOfOffers": 25},
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


# In the command: one probe per source, and what its facts mean

@dataclass
class SourceCheck:
    source: str
    status: str                    # matches | changed | fetch failed | skipped
    offers: int = 0
    min_offers: int = 0            # what one page must yield (see judge)
    crawl_min_offers: int = 0      # the crawl monitor's minimum for a whole crawl
    sibling_pages: int = 1         # pages like the one read that the full crawl fetches
    page_url: str | None = None    # the last page requested
    http_status: int | None = None
    requests: int = 0              # pages requested (robots.txt aside)
    pages_not_fetched: int = 0     # further pages the full crawl reads
    reasons: list[str] = field(default_factory=list)


def judge(source: str, facts: dict, timeout_seconds: float) -> SourceCheck:
    """The verdict on one probe's facts. A page that could not be fetched is "fetch failed"; a page
    fetched whose offers do not have the shape the spider expects is "changed".

    The monitor's minimum is for a whole crawl. A source whose crawl fetches several pages like
    the one read (AWS: one per region; RunPod: one per place) owes its share of it on that page,
    rounded up; next pages are not counted off (their number is unknown until fetched)."""
    url, status, error = facts.get("page_url"), facts.get("page_status"), facts.get("page_error")
    crawl_min, siblings = facts.get("min_offers", 1), max(1, facts.get("sibling_pages", 1))
    offers, min_offers = facts.get("offers", 0), math.ceil(crawl_min / siblings)
    fetch_problems, shape_problems = [], []
    if facts.get("robots_forbidden"):
        fetch_problems.append(f"robots.txt disallows {url}")
    elif error and "Timeout" in error.split(":")[0]:
        fetch_problems.append(f"timeout: no answer within {timeout_seconds:g} s from {url} "
                              f"({error})")
    elif error:
        fetch_problems.append(f"download failed: {error} ({url})")
    elif status is not None and status >= 400:
        fetch_problems.append(f"HTTP error {status} from {url}")
    elif url is None:
        fetch_problems.append("the spider made no request")
    elif facts.get("finish_reason", "finished") != "finished":
        fetch_problems.append(f"the probe ended with {facts['finish_reason']!r} ({url})")
    if not fetch_problems:
        shape_problems.extend(f"parse error: {e}" for e in facts.get("parse_errors", []))
        if offers == 0:
            shape_problems.append("zero offers")
        elif offers < min_offers:
            share = (f": the crawl's {crawl_min} over {siblings} pages like this one"
                     if siblings > 1 else "")
            shape_problems.append(f"only {offers} offers (at least {min_offers} expected{share})")
        shape_problems.extend(f"{count} of {offers} offers miss required field {name!r}"
                              for name, count in sorted(facts.get("missing", {}).items()))
    verdict = FETCH_FAILED if fetch_problems else CHANGED if shape_problems else MATCHES
    return SourceCheck(source, verdict, offers, min_offers, crawl_min, siblings, url, status,
                       facts.get("requests", 0), facts.get("pages_not_fetched", 0),
                       fetch_problems + shape_problems)


def check_source(source: str, replay_url: str | None, timeout_seconds: float) -> SourceCheck:
    """Probe one source in a subprocess; its facts judged."""
    with tempfile.TemporaryDirectory(prefix=f"gpuprices-check-{source}-") as tmp:
        result_path = Path(tmp) / "result.json"
        env = {**os.environ, "GPUPRICES_DATA_DIR": str(Path(tmp) / "data"),
               "GPUPRICES_REPLAY_URL": replay_url or ""}  # empty: live (see replay_base_url)
        cmd = [sys.executable, "-m", MODULE, source, str(Path(tmp) / "data"), str(result_path),
               str(timeout_seconds)]
        deadline = (1 + MAX_REQUESTS) * timeout_seconds + 2 * STARTUP_ALLOWANCE_SECONDS
        try:
            proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                                  timeout=deadline)
        except subprocess.TimeoutExpired:
            return SourceCheck(source, FETCH_FAILED,
                               reasons=[f"timeout: the probe did not end within {deadline:g} s"])
        if not result_path.exists():
            tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
            return SourceCheck(source, FETCH_FAILED, reasons=[
                f"the probe did not finish (exit code {proc.returncode}): {tail}"])
        return judge(source, json.loads(result_path.read_text(encoding="utf-8")),
                     timeout_seconds)


def check_sources(sources: list[str], replay_url: str | None,
                  timeout_seconds: float) -> list[SourceCheck]:
    """Every source checked (those missing a required API key skipped), in the order given."""
    from spiders.registry import spider_class

    def one(source: str) -> SourceCheck:
        if reason := spider_class(source).missing_key():
            return SourceCheck(source, SKIPPED, reasons=[reason])
        return check_source(source, replay_url, timeout_seconds)

    with ThreadPoolExecutor(PARALLEL_PROBES) as pool:
        return list(pool.map(one, sources))


STYLES = {MATCHES: "green", CHANGED: "bold red", FETCH_FAILED: "red", SKIPPED: "yellow"}


@click.command("check-sources")
@click.option("--live", is_flag=True,
              help="Fetch the vendors' real pages instead of the bundled snapshots.")
@click.option("--source", "sources", multiple=True, metavar="NAME",
              help="Only this source (repeatable); see `gpuprices sources`.")
@click.option("--timeout", "timeout_seconds", type=click.FloatRange(min=0.5, max=600),
              default=DEFAULT_TIMEOUT_SECONDS, show_default=True,
              help="Seconds to wait for each download (robots.txt, the page).")
@click.option("--snapshots", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=None, help="Replay these snapshots instead of data/snapshots/ "
                                 "(or GPUPRICES_SNAPSHOT_DIR); not with --live.")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]),
              default="table", show_default=True)
@click.pass_context
def check_sources_command(ctx: click.Context, live: bool, sources: tuple[str, ...],
                          timeout_seconds: float, snapshots: Path | None,
                          output_format: str) -> None:
    """Check that each source's page still has the shape its spider reads.

    Fetches one page of offers per source (the project's User-Agent, robots.txt obeyed, no
    retries, one request at a time), runs the spider's own parse on it and checks the offers:
    required fields present, at least the source's minimum number of offers (its share, when the
    crawl reads several such pages). Writes nothing to the database or the raw archive. Without
    --live the bundled snapshots are replayed on 127.0.0.1 (works offline).

    \b
    Exit codes: 0 every source matches (or is skipped: a required API key is not set);
                1 some source changed or could not be fetched; 2 usage error.
    """
    from spiders.registry import source_names
    from spiders.replay_server import ReplayServer

    known = source_names()
    unknown = sorted(set(sources) - set(known))
    if unknown:
        raise click.BadParameter(f"unknown source(s) {', '.join(unknown)}; known: "
                                 f"{', '.join(known)}", ctx, param_hint="--source")
    if live and snapshots:
        raise click.UsageError("--snapshots replays recorded pages; it cannot go with --live", ctx)
    chosen = list(dict.fromkeys(sources)) or known
    if live:
        results = check_sources(chosen, None, timeout_seconds)
    else:
        snapshot_dir = snapshots or Path(os.environ.get("GPUPRICES_SNAPSHOT_DIR") or SNAPSHOT_DIR)
        with ReplayServer(snapshot_dir) as server:
            results = check_sources(chosen, server.url, timeout_seconds)
    if output_format == "json":
        click.echo(json.dumps([asdict(r) for r in results], ensure_ascii=False, indent=2))
    else:
        _print_table(results, "live" if live else "replay")
    if any(r.status in (CHANGED, FETCH_FAILED) for r in results):
        ctx.exit(EXIT_CHANGED)


def _print_table(results: list[SourceCheck], mode: str) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"sources ({mode}: one page of offers each)", show_lines=True)
    for column in ("source", "verdict", "offers", "page", "reasons"):
        table.add_column(column, overflow="fold")
    for r in results:
        offers = "-" if r.status == SKIPPED else f"{r.offers} (min {r.min_offers})"
        page = "-"
        if r.page_url:  # host and path; the whole URL is in --format json
            parts = urlsplit(r.page_url)
            page = escape(f"{parts.netloc}{parts.path}"
                          + (f" -> HTTP {r.http_status}" if r.http_status else ""))
        if r.requests > 1:
            page += f" ({r.requests} requests)"
        if r.pages_not_fetched:
            page += f" (+{r.pages_not_fetched} pages not fetched)"
        table.add_row(r.source, f"[{STYLES[r.status]}]{r.status}[/]", offers, page,
                      escape("; ".join(r.reasons)))
    console = Console(highlight=False)
    console.print(table)
    counts = {s: sum(r.status == s for r in results) for s in STYLES}
    console.print(", ".join(f"{n} {s}" for s, n in counts.items() if n))


if __name__ == "__main__":  # the probe of one source: SOURCE DATA_DIR RESULT_PATH TIMEOUT
    _source, _data_dir, _result, _timeout = sys.argv[1:5]
    run_probe(_source, Path(_data_dir), Path(_result), float(_timeout))
