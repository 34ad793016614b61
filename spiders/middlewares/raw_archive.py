"""Content-addressed archive of every response body, so the pipeline can be re-run from raw.

Bodies are stored gzip-compressed once per content hash under `<data>/raw/objects/ab/<sha256>.gz`;
each fetch (URL, method, status, headers, fetch time, body hash) is one line of
`<data>/raw/fetches/<source>/<crawl_id>.jsonl`. Offers carry the hash as `raw_ref`.
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
from scrapy.http import Response

from spiders.layout import data_dir
from spiders.replay_server import CAPTURED_AT_HEADER


def body_sha256(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


class RawArchive:
    """Writes bodies and fetch records; shared by the middleware and the Playwright XHR hook."""

    def __init__(self, root: Path, source: str, crawl_id: str) -> None:
        self.objects = root / "objects"
        self.log_path = root / "fetches" / source / f"{crawl_id}.jsonl"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)

    def store(self, *, url: str, method: str, status: int, headers: dict[str, str],
              body: bytes, request_body: bytes | None = None) -> str:
        sha = body_sha256(body)
        path = self.objects / sha[:2] / f"{sha}.gz"
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
        root = data_dir(spider.settings.get("GPUPRICES_DATA_DIR")) / "raw"
        archive = RawArchive(root, spider.name, crawl_id)
        spider._raw_archive = archive
    return archive


class RawArchiveMiddleware:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RawArchiveMiddleware:
        return cls(crawler)

    def process_response(self, request: Request, response: Response) -> Response:
        spider = self.crawler.spider
        live_url = request.meta.get("gpuprices_live_url", response.url)
        headers = {k.decode(): b", ".join(v).decode("latin-1") for k, v in response.headers.items()}
        archive_for(spider).store(url=live_url, method=request.method, status=response.status,
                                  headers=headers, body=response.body,
                                  request_body=request.body or None)
        return response


def captured_at(response: Response) -> str | None:
    value = response.headers.get(CAPTURED_AT_HEADER)
    return value.decode() if value else None
