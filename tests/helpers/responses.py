"""Recorded snapshot files (data/snapshots/<source>/) as real Scrapy responses, and a spider
replayed over its snapshot in-process (`replay_spider`)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from scrapy.http import HtmlResponse, Request, TextResponse
from scrapy.utils.test import get_crawler

from spiders.layout import SNAPSHOT_DIR
from spiders.price_basis import entry_price_basis
from spiders.registry import spider_class
from spiders.replay_server import Snapshot, request_key


def snapshot_entries(source: str) -> list[dict]:
    """The manifest's entries, each with its capture time and its price basis and as-of date as
    the replay server reads them (spiders/price_basis.py entry_price_basis)."""
    manifest = json.loads((SNAPSHOT_DIR / source / "manifest.json").read_text(encoding="utf-8"))
    return [{**e, "captured_at": e.get("captured_at") or manifest["captured_at"],
             **dict(zip(("price_basis", "prices_as_of"), entry_price_basis(e, manifest),
                        strict=True))}
            for e in manifest["entries"]]


def file_response(source: str, file: str) -> TextResponse:
    """The recorded file as a real Scrapy response carrying the live URL it was recorded from."""
    entry = next(e for e in snapshot_entries(source) if e["file"] == file)
    body = (SNAPSHOT_DIR / source / file).read_bytes()
    cls = HtmlResponse if "html" in entry["content_type"] else TextResponse
    said = Snapshot(source, SNAPSHOT_DIR / source / file, 200, entry["content_type"],
                    entry["captured_at"], price_basis=entry["price_basis"],
                    prices_as_of=entry["prices_as_of"]).headers()   # the replay server's headers
    return cls(url=entry["url"], body=body, encoding="utf-8", request=Request(entry["url"]),
               headers={"Content-Type": entry["content_type"], **said})


def parsed_file(source: str, file: str, response: TextResponse | None = None) -> list:
    """What `source`'s spider yields from its recorded `file` (or from `response`, a test's
    variant of it)."""
    spider = spider_class(source)(crawl_id="test")
    return list(spider.parse(response or file_response(source, file)))


def json_response(url: str, body, status: int = 200) -> TextResponse:
    """`body` as JSON, answered at the live `url`: a response a test builds (an error envelope,
    a renamed field) instead of a recorded one."""
    return TextResponse(url=url, body=json.dumps(body, ensure_ascii=False).encode("utf-8"),
                        status=status, encoding="utf-8", request=Request(url))


def entry_key(entry: dict) -> str:
    """The replay server's key of a manifest entry (method, canonical URL, JSON body)."""
    body = entry.get("body")
    if body is not None and not isinstance(body, str):
        body = json.dumps(body)
    return request_key(entry.get("method", "GET"), entry["url"], body)


@dataclass(frozen=True)
class Replay:
    """What one spider did over its snapshot: the offers it yielded, the manifest entries it
    requested (their files), and the requests no entry answers (the replay server's 404s)."""
    offers: list[dict]
    files_read: frozenset[str]
    unrecorded: tuple[str, ...]


def replay_spider(source: str, settings: dict | None = None) -> Replay:
    """`source`'s spider crawling its snapshot in-process, as the replay server would answer it:
    every request it makes (start, then each callback's follow-ups, duplicates filtered as
    Scrapy's dupefilter does) is answered by the recorded file of its entry; an error status goes
    to the callback only when the request handles it (handle_httpstatus_list), as Scrapy's
    HttpErrorMiddleware lets it. The keys the spider sees are the environment's."""
    cls = spider_class(source)
    spider = cls.from_crawler(get_crawler(cls, settings or {}), crawl_id="replay")
    entries = {entry_key(e): e for e in snapshot_entries(source)}

    async def started() -> list:
        return [r async for r in spider.start()]

    queue, offers, seen, read, unrecorded = asyncio.run(started()), [], set(), set(), []
    while queue:
        request = queue.pop(0)
        key = request_key(request.method, request.url, request.body or None)
        if key in seen and not request.dont_filter:
            continue
        seen.add(key)
        if (entry := entries.get(key)) is None:
            unrecorded.append(key)
            continue
        read.add(entry["file"])
        status = int(entry.get("status", 200))
        if status >= 300 and status not in request.meta.get("handle_httpstatus_list", ()):
            continue
        response = file_response(source, entry["file"]).replace(
            url=request.url, status=status, request=request)
        for output in (request.callback or spider.parse)(response, **request.cb_kwargs) or ():
            (queue if isinstance(output, Request) else offers).append(output)
    return Replay([dict(o) for o in offers], frozenset(read), tuple(unrecorded))
