"""Close-spider monitor: a crawl that returns too few offers, misses fields or hit errors fails
loudly, naming the source and why (Scrapy itself exits 0 even when every download failed).

The verdict is written to `<data>/raw/crawls/<source>/<crawl_id>.json`, which the Dagster ingest
asset reads; only offers of a passing crawl are loaded.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime

from scrapy import signals
from scrapy.crawler import Crawler

from spiders.items import missing_fields
from spiders.layout import crawl_verdict_path, data_dir

# The stats a spider's skip() counts, one per reason (spiders/base/spider.py).
SKIPPED_STAT = "offers_skipped/"


def evaluate(stats: dict, *, offers: int, min_offers: int, missing: Counter,
             errors: list[str], max_size: int = 0) -> list[str]:
    """The failures of one crawl, as sentences; an empty list means it passed. The causes come
    first (a status, a missing field, a parse error), the count of offers they left last: the
    first sentence is the one a short view shows (`gpuprices sources`, a log line)."""
    failures = []
    if stats.get("finish_reason") != "finished":
        failures.append(f"crawl ended with {stats.get('finish_reason')!r}, not 'finished'")
    for field, count in sorted(missing.items()):
        failures.append(f"{count} of {offers} offers miss required field {field!r}")
    prefix = "downloader/exception_type_count/"
    retried = {k[len("retry/reason_count/"):]: v for k, v in stats.items()
               if k.startswith("retry/reason_count/")}
    exceptions = {k[len(prefix):]: v for k, v in stats.items() if k.startswith(prefix)}
    # an attempt that failed and was retried is not a failure unless the last attempt failed too
    if any(count > retried.get(path, 0) for path, count in exceptions.items()):
        kinds = ", ".join(f"{path.rsplit('.', 1)[-1]} x{count}"
                          for path, count in sorted(exceptions.items()))
        failures.append(f"{sum(exceptions.values())} download attempts failed ({kinds})")
        if any(p.endswith("DownloadCancelledError") for p in exceptions) and max_size:
            failures.append(f"a response was larger than DOWNLOAD_MAXSIZE ({max_size} bytes) "
                            "and was refused")
    redirects = {k.rsplit("/", 1)[-1]: v for k, v in stats.items()
                 if k.startswith("downloader/response_status_count/3")}
    if redirects and offers < min_offers:
        codes = ", ".join(f"HTTP {c} x{n}" for c, n in sorted(redirects.items()))
        failures.append(f"redirected {sum(redirects.values())} times ({codes}): a redirect loop?")
    statuses = {k.rsplit("/", 1)[-1]: v for k, v in stats.items()
                if k.startswith("httperror/response_ignored_status_count/")}
    if statuses:
        codes = ", ".join(f"HTTP {code} x{count}" for code, count in sorted(statuses.items()))
        failures.append(f"{sum(statuses.values())} responses had an error status ({codes})")
    failures.extend(errors[:5])
    if offers < min_offers:
        skipped = {k[len(SKIPPED_STAT):]: v for k, v in stats.items()
                   if k.startswith(SKIPPED_STAT)}
        if skipped:   # what the spider left out may be every row: a changed unit or label
            failures.append("rows left out: " + ", ".join(
                f"{reason} x{count}" for reason, count in sorted(skipped.items())))
        failures.append(f"only {offers} offers collected (expected at least {min_offers})")
    return failures


def parse_error_text(error: BaseException) -> str:
    """A parse error in words. A KeyError's own text is the bare key (`'gpu_name'`); a key the
    spider reads that is gone is a renamed or dropped field, and the verdict says so."""
    if isinstance(error, KeyError) and error.args:
        return f"field {error.args[0]!r} missing from the answer (KeyError: renamed or dropped?)"
    return str(error) or type(error).__name__


class OfferMonitor:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.offers = 0
        self.missing: Counter = Counter()
        self.errors: list[str] = []
        self.started_at = datetime.now(UTC)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> OfferMonitor:
        monitor = cls(crawler)
        crawler.signals.connect(monitor.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(monitor.spider_error, signal=signals.spider_error)
        crawler.signals.connect(monitor.spider_closed, signal=signals.spider_closed)
        return monitor

    def item_scraped(self, item, response, spider) -> None:
        self.offers += 1
        self.missing.update(missing_fields(item))

    def spider_error(self, failure, response, spider) -> None:
        self.errors.append(f"parse error on {response.url}: {parse_error_text(failure.value)}")

    def spider_closed(self, spider, reason) -> None:
        stats = dict(self.crawler.stats.get_stats())
        stats["finish_reason"] = reason
        failures = evaluate(stats, offers=self.offers, min_offers=getattr(spider, "min_offers", 1),
                            missing=self.missing, errors=self.errors,
                            max_size=self.crawler.settings.getint("DOWNLOAD_MAXSIZE"))
        verdict = {
            "source": spider.name,
            "crawl_id": getattr(spider, "crawl_id", None),
            "started_at": self.started_at.isoformat(timespec="seconds"),
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "finish_reason": reason,
            "offers": self.offers,
            "requests": stats.get("downloader/request_count", 0),
            "passed": not failures,
            "failures": failures,
            "stats": {k: v for k, v in stats.items()
                      if k.startswith(("retry/", "downloader/response_status_count/",
                                       "httperror/", "robotstxt/", SKIPPED_STAT))},
        }
        crawl_id = verdict["crawl_id"] or "adhoc"
        path = crawl_verdict_path(spider.name, crawl_id,
                                  data_dir(spider.settings.get("GPUPRICES_DATA_DIR")))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(verdict, ensure_ascii=False, indent=2), encoding="utf-8")
        for failure in failures:
            spider.logger.error("monitor failed for source %s: %s", spider.name, failure)
