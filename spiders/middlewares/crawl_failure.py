"""Ending a crawl on purpose, with a reason the verdict names.

Some faults must fail the crawl even when enough offers arrive: a body over the size limit, or a
body that could not be archived (a crawl whose raw bodies are missing cannot be replayed with
`--from-raw`). Scrapy has no stat the monitor turns into such a sentence, so the crawl is closed
with the reason as its finish reason: the monitor's verdict then says
"crawl ended with '<reason>', not 'finished'".
"""

from __future__ import annotations

import logging

from scrapy.crawler import Crawler
from scrapy.utils.defer import deferred_from_coro

logger = logging.getLogger(__name__)

FAILED_BECAUSE = "gpuprices/failed_because"   # stats key: the first reason given


def fail_crawl(crawler: Crawler, reason: str) -> None:
    """Close the crawl with `reason` (the first reason wins; later ones are logged only)."""
    logger.error("failing the crawl: %s", reason)
    if crawler.stats.get_value(FAILED_BECAUSE) is not None:
        return
    crawler.stats.set_value(FAILED_BECAUSE, reason)
    try:
        engine = crawler.engine
    except RuntimeError:   # no crawl running (a middleware used on its own): nothing to close
        return
    # scheduled, not awaited: the caller may be a download that the close waits for
    deferred_from_coro(engine.close_spider_async(reason=reason))


def oversize_reason(max_size: int, url: str) -> str:
    return f"response over {max_size} bytes (DOWNLOAD_MAXSIZE): {url}"
