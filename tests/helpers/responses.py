"""Recorded snapshot files (data/snapshots/<source>/) as real Scrapy responses."""

from __future__ import annotations

import json

from scrapy.http import HtmlResponse, Request, TextResponse

from spiders.layout import SNAPSHOT_DIR
from spiders.replay_server import CAPTURED_AT_HEADER


def snapshot_entries(source: str) -> list[dict]:
    manifest = json.loads((SNAPSHOT_DIR / source / "manifest.json").read_text(encoding="utf-8"))
    return [{**e, "captured_at": e.get("captured_at") or manifest["captured_at"]}
            for e in manifest["entries"]]


def file_response(source: str, file: str) -> TextResponse:
    """The recorded file as a real Scrapy response carrying the live URL it was recorded from."""
    entry = next(e for e in snapshot_entries(source) if e["file"] == file)
    body = (SNAPSHOT_DIR / source / file).read_bytes()
    cls = HtmlResponse if "html" in entry["content_type"] else TextResponse
    return cls(url=entry["url"], body=body, encoding="utf-8", request=Request(entry["url"]),
               headers={"Content-Type": entry["content_type"],
                        CAPTURED_AT_HEADER: entry["captured_at"]})


def json_response(url: str, body, status: int = 200) -> TextResponse:
    """`body` as JSON, answered at the live `url`: a response a test builds (an error envelope,
    a renamed field) instead of a recorded one."""
    return TextResponse(url=url, body=json.dumps(body, ensure_ascii=False).encode("utf-8"),
                        status=status, encoding="utf-8", request=Request(url))
