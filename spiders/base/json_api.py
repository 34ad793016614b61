"""JSON APIs, optionally paged by a "next page" link in the body."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from scrapy.http import Response

from spiders.base.spider import GpuPriceSpider
from spiders.items import RawOffer


def dig(data: Any, dotted_path: str) -> Any:
    """`dig({"data": {"list": [1]}}, "data.list") == [1]`; None when a key is missing."""
    for key in dotted_path.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


class JsonApiSpider(GpuPriceSpider):
    """Attributes: `start_urls`; `offers_path`, the dotted path of the offer list in the body;
    `next_page_path`, the dotted path of the next page's URL (None: not paged).
    Hook: `parse_offer(offer, response)` yields RawOffers for one element of the list (or none to
    skip it, e.g. a Windows or retired meter)."""

    fetch_style = "JSON API"
    offers_path: ClassVar[str]
    next_page_path: ClassVar[str | None] = None

    async def start(self):
        for url in self.start_urls:
            yield self.request(url)

    def parse(self, response: Response) -> Iterable[Any]:
        body = response.json()
        offers = dig(body, self.offers_path)
        if not isinstance(offers, list):
            raise ValueError(f"{self.name}: no list at {self.offers_path!r} in {response.url}")
        for offer in offers:
            yield from self.parse_offer(offer, response)
        next_page = dig(body, self.next_page_path) if self.next_page_path else None
        if next_page:
            yield self.request(next_page)

    def parse_offer(self, offer: dict, response: Response) -> Iterable[RawOffer]:
        raise NotImplementedError
