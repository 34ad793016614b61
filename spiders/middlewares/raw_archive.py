"""Content-addressed archive of every response body, so the pipeline can be re-run from raw.

Bodies are stored gzip-compressed once per content hash under `<data>/raw/objects/ab/<sha256>.gz`;
each fetch (URL, method, status, headers, fetch time, body hash) is one line of
`<data>/raw/fetches/<source>/<crawl_id>.jsonl`. Offers carry the hash as `raw_ref`.

A body that cannot be archived (disk full, read-only, a file where a folder should be) fails the
crawl, naming the URL and the error: its offers are not used, since `--from-raw` could not replay
them. A page rendered by Chromium is held to DOWNLOAD_MAXSIZE here (Scrapy applies it to plain
HTTP downloads only; the browser's own requests are limited by spiders/base/browser.py).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response

from spiders.layout import data_dir, fetch_log_path, raw_object_path
from spiders.middlewares.crawl_failure import fail_crawl, oversize_reason
from spiders.replay_server import CAPTURED_AT_HEADER, PRICE_BASIS_HEADER, PRICES_AS_OF_HEADER


def body_sha256(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


class RawArchive:
    """Writes bodies and fetch records; shared by the middleware and the Playwright XHR hook."""

    def __init__(self, root: Path, source: str, crawl_id: str) -> None:
        """`root`: the data directory (its raw archive is spiders/layout.raw_dir(root))."""
        self.root = root
        self.log_path = fetch_log_path(source, crawl_id, root)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)

    def store(self, *, url: str, method: str, status: int, headers: dict[str, str],
              body: bytes, request_body: bytes | None = None) -> str:
        sha = body_sha256(body)
        path = raw_object_path(sha, self.root)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_bytes(gzip.compress(body))
            tmp.replace(path)  # atomic: a reader never sees half an object
        record = {
            "fetched_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "method": method, "url": url, "status": status, "sha256": sha, "size": len(body),
            "request_body": request_body.decode("utf-8", "replace") if request_body else None,
            "headers": headers,
        }
        with self.log_path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        return sha


def archive_for(spider: Spider) -> RawArchive:
    archive = getattr(spider, "_raw_archive", None)
    if archive is None:
        crawl_id = getattr(spider, "crawl_id", None) or datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        root = data_dir(spider.settings.get("GPUPRICES_DATA_DIR"))
        archive = RawArchive(root, spider.name, crawl_id)
        spider._raw_archive = archive
    return archive


def archive_or_fail(spider: Spider, **fetch) -> bool:
    """Store one fetch (RawArchive.store's arguments); False, with the crawl failing, when the
    archive cannot be written."""
    try:
        archive_for(spider).store(**fetch)
    except OSError as exc:
        fail_crawl(spider.crawler, f"raw archive write failed for {fetch['url']}: {exc}")
        return False
    return True


class RawArchiveMiddleware:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RawArchiveMiddleware:
        return cls(crawler)

    def process_response(self, request: Request, response: Response) -> Response:
        spider = self.crawler.spider
        live_url = request.meta.get("gpuprices_live_url", response.url)
        max_size = self.crawler.settings.getint("DOWNLOAD_MAXSIZE")
        if request.meta.get("playwright") and max_size and len(response.body) > max_size:
            reason = oversize_reason(max_size, live_url)
            fail_crawl(self.crawler, reason)
            raise IgnoreRequest(reason)
        headers = {k.decode(): b", ".join(v).decode("latin-1") for k, v in response.headers.items()}
        if not archive_or_fail(spider, url=live_url, method=request.method, status=response.status,
                               headers=headers, body=response.body,
                               request_body=request.body or None):
            raise IgnoreRequest(f"raw archive write failed for {live_url}")
        return response


def captured_at(response: Response) -> str | None:
    value = response.headers.get(CAPTURED_AT_HEADER)
    return value.decode() if value else None


def answer_price_basis(response: Response, observed_at: str) -> tuple[str, str | None]:
    """(price_basis, prices_as_of) of the prices in `response`: the replayed entry's, as the
    replay server said; `live` as of the day it was read when it said nothing (a live answer)."""
    basis = response.headers.get(PRICE_BASIS_HEADER)
    if not basis:
        return "live", observed_at[:10]
    as_of = response.headers.get(PRICES_AS_OF_HEADER)
    return basis.decode(), (as_of.decode() if as_of else None)
