"""矩池云 Matpool (matpool.com): the GPU machine pools its web market lists, a keyless JSON API.

Reads `GET https://matgo.cn/api/machine_pools?machine_category=0&page=<n>&per_page=100`
(machine_category 0 = GPU, an integer: the string "gpu" is refused), paged by
`pagination.num_pages` (not the PaaS list's `numPages`). The answer is `{pools: [...],
pagination: {...}}` and may carry no `code`: a missing code is no failure, but a `code` other than
0 (Matpool's business status, 0 = success) is an error sent with HTTP 200 and fails the crawl.
Each pool: `gpu_model` ("NVIDIA RTX A2000"), `domain` (zone id: 0 is zone 1),
`driver_version`, `max_available_units` (units rentable now), `resource_pool_id`, and
`machine.hardware.discountPriceMillicent` (falling back to `priceMillicent`).

Unit: `*PriceMillicent / 100000` is 元 per hour per unit (1 millicent = 1/1000 分). An agent note
on the logged-in `/api/machines` called the same field 厘 yet gave 55000 = ¥0.55/h; the keyless
machine_pools note settles it ("discountPriceMillicent / 100000 为折扣后的元/小时/份"), and the
2026-10-04 prices (RTX 4090 ¥2.20/h) fit it: see spiders/parsing/units.py, where normalization
converts it.

Evidence: a note dated 2026-09-07, "从官网公开客户端代码确认并实测" (code-search index file
70205348888; its repository is not named by the index), quoted in docs/sources.md (matpool_cn);
the numeric code and the hardware shape: Aoblex/matpool-cli (`docs/api-notes.md` @ 17703dec).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.base.json_api import checked_json
from spiders.items import RawOffer

POOLS_URL = "https://matgo.cn/api/machine_pools"
GPU_CATEGORY = 0
PER_PAGE = 100
PRICE_UNIT = "millicent"
PRICE_FIELDS = ("discountPriceMillicent", "priceMillicent")   # the current price first


def pools_url(page: int) -> str:
    query = {"machine_category": GPU_CATEGORY, "page": page, "per_page": PER_PAGE}
    return f"{POOLS_URL}?{urlencode(query)}"


def checked_body(body: Any, url: str) -> dict:
    """The answer, or a loud error: a non-zero code, or no pools list / pagination."""
    if not isinstance(body, dict):
        raise ValueError(f"matpool_cn: not a JSON object in {url}")
    if body.get("code") not in (None, 0):
        raise ValueError(f"matpool_cn: API error {body['code']!r}: "
                         f"{body.get('msg') or body.get('message')!r} ({url})")
    if not isinstance(body.get("pools"), list) or not isinstance(body.get("pagination"), dict):
        raise ValueError(f"matpool_cn: no pools list and pagination in {url}")
    return body


class MatpoolCNSpider(JsonApiSpider):
    name = "matpool_cn"
    vendor = "矩池云 Matpool"
    vendor_kind = "gpu_cloud"
    start_urls = [pools_url(1)]
    offers_path = "pools"
    public_path = ("the keyless market machine pools, GET matgo.cn/api/machine_pools "
                   "(prices in millicent = 1e-5 元 per hour per unit)")
    min_offers = 3

    def parse(self, response: Response, page: int = 1) -> Iterable[Any]:
        body = checked_body(checked_json(response), response.url)
        for pool in body["pools"]:
            yield from self.parse_offer(pool, response)
        num_pages = body["pagination"].get("num_pages")
        if isinstance(num_pages, bool) or not isinstance(num_pages, int):
            raise ValueError(f"matpool_cn: no integer pagination.num_pages in {response.url}")
        if page < num_pages:
            yield self.api_request(pools_url(page + 1), cb_kwargs={"page": page + 1})

    def parse_offer(self, pool: dict, response: Response, **_: Any) -> Iterable[RawOffer]:
        missing = [f for f in ("gpu_model", "domain", "max_available_units", "resource_pool_id")
                   if f not in pool]
        hardware = (pool.get("machine") or {}).get("hardware") if isinstance(
            pool.get("machine"), dict) else None
        if not isinstance(hardware, dict) or not any(f in hardware for f in PRICE_FIELDS):
            missing.append("machine.hardware.discountPriceMillicent|priceMillicent")
        if missing:   # a renamed field is a changed API, not an offer without it
            raise ValueError(f"matpool_cn: pool without {', '.join(missing)} in {response.url}")
        yield self.offer(
            response, sku=str(pool["resource_pool_id"]), gpu_text=pool["gpu_model"],
            gpu_count=1,   # priced per unit (份); one unit taken as one card (sources.md)
            region_text=f"domain {pool['domain']}", offer_kind="on_demand",
            billing_period="hour", available=int(pool["max_available_units"] or 0) > 0,
            **pool_price(hardware),
            vendor_data={k: pool.get(k) for k in ("domain", "driver_version",
                                                  "max_available_units")},
        )


def _number(value: object) -> bool:
    return isinstance(value, (int, float, str)) and not isinstance(value, bool)


def pool_price(hardware: dict) -> dict[str, object]:
    """The discounted price as served, else the list price, in millicent (normalization converts
    it to 元); the list price beside a discount as list_price_amount, in the same unit. A null or
    unreadable value goes on as served and normalization quarantines it with it."""
    field = next((f for f in PRICE_FIELDS if hardware.get(f) is not None), PRICE_FIELDS[0])
    raw = hardware.get(field)
    price: dict[str, object] = {"price_unit": PRICE_UNIT, "currency": "CNY"}
    if _number(raw):
        price["price_amount"] = raw
    listed = hardware.get("priceMillicent")
    if field == "discountPriceMillicent" and _number(listed):
        price["list_price_amount"] = listed
    return price
