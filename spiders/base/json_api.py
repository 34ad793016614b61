"""JSON APIs: one list of offers per response, optionally paged.

Attributes:
  start_urls      the API URLs
  post_json       a JSON body POSTed to every start URL (a search or GraphQL query); None: GET
  offers_path     dotted path of the offer list in the body ("data.list")
  next_page_path  dotted path of the next page's URL (None: not paged)
Hooks:
  parse_offer(offer, response, **context)  RawOffers for one element of the list, or none to
                  skip it (a Windows or retired meter). `context` is the request's cb_kwargs (the
                  place a per-place query asked about), empty for start URLs; a next page keeps
                  the context of the page that links to it.
  offers(body, response)     the offer list of one page; default: the list at `offers_path`,
                  loud when missing. Override for a list whose path depends on the URL, or to
                  fail on an API error sent with HTTP 200.
  next_page(body, response)  the next page's URL, None on the last page; default: the URL at
                  `next_page_path`. Override for a cursor or token that is not a URL.
  api_request(url, json_body=None, **kwargs)  the request for one API URL (start URLs, next
                  pages): a GET, or a POST of `json_body` as JSON. Override to add a header.
Every body is checked before it is decoded (`checked_json`): nesting deeper than MAX_JSON_DEPTH or
a number longer than MAX_JSON_DIGITS fails the page with a reason naming it, instead of Python's
"maximum recursion depth exceeded" or int-conversion limit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, ClassVar

import scrapy
from scrapy.http import Response

from spiders.base.spider import GpuPriceSpider
from spiders.items import RawOffer

# A price API nests a handful of levels and writes prices with a few digits; these are far above
# any real body and far below what breaks the decoder (recursion limit ~1000, int limit 4300).
MAX_JSON_DEPTH = 200
MAX_JSON_DIGITS = 400
# Escapes first (a backslash and the character after it, left to right), then strings: with no
# backslash left every quote opens or closes one, so both passes are linear even on hostile input.
_ESCAPE = re.compile(rb"\\.", re.S)
_STRING = re.compile(rb'"[^"]*"')
_LONG_NUMBER = re.compile(rb"(?<![0-9])[0-9]{%d}" % (MAX_JSON_DIGITS + 1))
_OPENING = frozenset(b"[{")
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))


class PathologicalJson(ValueError):
    """A body no price API sends, refused before the JSON decoder meets it."""


def json_shape_problem(body: bytes) -> str | None:
    """Why `body` is not decoded (too deep, a too long number), or None; linear in its length.
    Strings are blanked first, so brackets and digits inside them do not count."""
    outside_strings = _STRING.sub(b'""', _ESCAPE.sub(b"__", body))
    if _LONG_NUMBER.search(outside_strings):
        return f"a number of more than {MAX_JSON_DIGITS} digits"
    depth = 0
    for byte in outside_strings.translate(None, _NOT_BRACKETS):
        depth += 1 if byte in _OPENING else -1
        if depth > MAX_JSON_DEPTH:
            return f"nesting deeper than {MAX_JSON_DEPTH} levels"
    return None


class NotJson(ValueError):
    """An answer where JSON was expected that is not JSON: an error or login page, mostly."""


_TITLE = re.compile(rb"<title[^>]*>(.{0,120}?)</title>", re.I | re.S)


def not_json_reason(response: Response, error: ValueError) -> str:
    """Why a body did not decode, naming what came instead: an HTML page (with its title and
    Content-Type: a vendor's error or captcha page served with HTTP 200), or the decoder's
    error."""
    head = response.body[:2048].lstrip()
    content_type = response.headers.get("Content-Type", b"").decode("latin-1") or "none"
    if head[:1] == b"<" or "html" in content_type.lower():
        title = _TITLE.search(response.body[:65536])
        said = f", title {title[1].decode('utf-8', 'replace').strip()!r}" if title else ""
        return (f"expected JSON from {response.url}, got an HTML page (HTTP {response.status}, "
                f"Content-Type {content_type}{said})")
    return f"expected JSON from {response.url}, got a body that is not JSON ({error})"


def checked_json(response: Response) -> Any:
    """`response.json()`, refusing a pathological body with a named reason first, and naming what
    came instead of JSON when the body is not JSON."""
    if (problem := json_shape_problem(response.body)) is not None:
        raise PathologicalJson(f"refused JSON from {response.url}: {problem}")
    try:
        return response.json()
    except ValueError as exc:   # json.JSONDecodeError, or Scrapy's "not a text response"
        raise NotJson(not_json_reason(response, exc)) from None


def dig(data: Any, dotted_path: str) -> Any:
    """`dig({"data": {"list": [1]}}, "data.list") == [1]`; None when a key is missing."""
    for key in dotted_path.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


class JsonApiSpider(GpuPriceSpider):
    fetch_style = "JSON API"
    post_json: ClassVar[Any] = None
    offers_path: ClassVar[str]
    next_page_path: ClassVar[str | None] = None
    # The key variable (one of key_envs) a request sends as `Authorization: Bearer <key>`.
    bearer_key_env: ClassVar[str | None] = None

    async def start(self):
        for url in self.start_urls:
            yield self.api_request(url, self.post_json)

    def api_request(self, url: str, json_body: Any = None, **kwargs: Any) -> scrapy.Request:
        if self.bearer_key_env:
            key = (self.credentials() or {}).get(self.bearer_key_env, "")
            kwargs["headers"] = {"Authorization": f"Bearer {key}", **kwargs.get("headers", {})}
        if json_body is None:
            return self.request(url, **kwargs)
        headers = {"Content-Type": "application/json", **kwargs.pop("headers", {})}
        return self.request(url, method="POST", body=json.dumps(json_body), headers=headers,
                            **kwargs)

    def parse(self, response: Response, **context: Any) -> Iterable[Any]:
        body = checked_json(response)
        for offer in self.offers(body, response):
            yield from self.parse_offer(offer, response, **context)
        if next_page := self.next_page(body, response):
            yield self.api_request(next_page, cb_kwargs=context)

    def offers(self, body: Any, response: Response) -> list:
        return self.list_at(body, self.offers_path, response)

    def next_page(self, body: Any, response: Response) -> str | None:
        return dig(body, self.next_page_path) if self.next_page_path else None

    def list_at(self, body: Any, dotted_path: str, response: Response) -> list:
        """The list at `dotted_path`; a changed API or an error body is a loud error."""
        found = dig(body, dotted_path)
        if not isinstance(found, list):
            raise ValueError(f"{self.name}: no list at {dotted_path!r} in {response.url}")
        return found

    def parse_offer(self, offer: Any, response: Response, **context: Any) -> Iterable[RawOffer]:
        raise NotImplementedError
