"""Prime Intellect: an aggregator. Its availability API lists the GPU offers of many clouds
(RunPod, Lambda, Hyperstack, ...), each with the cloud that provides it; the API needs a key.

Where the knowledge comes from: Prime Intellect's official SDK, the package `prime` 0.18.0
(module prime_cli), and its public API docs
(https://docs.primeintellect.ai/api-reference/check-gpu-availability):
* request: `AvailabilityClient.get()` (prime_cli/api/availability.py) GETs "/availability/gpus"
  page by page with `page` and `page_size` (DEFAULT_PAGE_SIZE = 100) until it holds
  `totalCount` items; `APIClient.request()` (prime_cli/core/client.py) prefixes "/api/v1" to
  `Config.DEFAULT_BASE_URL` ("https://api.primeintellect.ai") and sends
  "Authorization: Bearer <key>"; `Config.api_key` (prime_cli/core/config.py) reads the key from
  PRIME_API_KEY. This spider reads only the environment (never ~/.prime/config.json) and never
  builds the SDK's Config, which would write that file.
* response: `{"items": [...], "totalCount": n}`, each item a `GPUAvailability` (pydantic model,
  same module): provider, gpuType, socket, gpuCount, dataCenter, country, security
  ("secure_cloud" | "community_cloud"), stockStatus, isSpot, prepaidTime, prices {onDemand,
  communityPrice, isVariable, currency}. The price is `Prices.price` as the SDK's CLI shows it
  ("Price/Hr" of the whole configuration: communityPrice when set, else onDemand).
* shape check: every item goes through `GPUAvailability.model_validate` (a required field
  missing fails) and through `unknown_fields` (a field the SDK does not model fails: pydantic
  ignores extras by default, so the keys are compared, nested models too).

Every offer keeps its provider as `vendor` (the same name our own spider of that cloud uses,
read from the registry) and "primeintellect" as its source; `reaches_via = "aggregator"` makes
the SQL models count it once (docs/signals.md, "Counted once").
Multi-node clusters (/availability/multi-node) are not read: they are not single instances.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from prime_cli.api.availability import DEFAULT_PAGE_SIZE, GPUAvailability
from prime_cli.core.client import default_user_agent
from prime_cli.core.config import Config
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError
from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.items import RawOffer
from spiders.registry import spider_class

API_BASE = f"{Config.DEFAULT_BASE_URL}/api/v1"
GPUS_PATH = "/availability/gpus"

# Prime Intellect's provider slug -> the source slug of our own spider of that cloud: its
# vendor name and kind are read from that spider, so the aggregator's offer of a cloud carries
# the vendor string the direct offer carries (the counted-once rule pairs on it).
CRAWLED_PROVIDERS = {"runpod": "runpod", "lambdalabs": "lambda_cloud", "lambda": "lambda_cloud",
                     "vultr": "vultr", "vastai": "vastai", "aws": "aws", "azure": "azure",
                     "google": "gcp", "gcp": "gcp"}
# Clouds we do not crawl: a clean display name and kind. Any other slug keeps a name made from
# itself (counted in the stat primeintellect/unnamed_providers).
OTHER_PROVIDERS = {
    "hyperstack": ("Hyperstack", "gpu_cloud"), "datacrunch": ("DataCrunch", "gpu_cloud"),
    "massedcompute": ("Massed Compute", "gpu_cloud"), "tensordock": ("TensorDock", "marketplace"),
    "crusoecloud": ("Crusoe", "gpu_cloud"), "fluidstack": ("FluidStack", "gpu_cloud"),
    "oblivus": ("Oblivus", "gpu_cloud"), "latitude": ("Latitude.sh", "gpu_cloud"),
    "nebius": ("Nebius", "gpu_cloud"), "cudocompute": ("CUDO Compute", "gpu_cloud"),
    "primecompute": ("Prime Intellect", "gpu_cloud"),
}
IN_STOCK = {"Available", "High", "Medium", "Low"}
OUT_OF_STOCK = {"Unavailable"}


class ShapeError(ValueError):
    """A body the SDK's response model does not describe."""


def page_url(page: int) -> str:
    """The URL the SDK's AvailabilityClient requests for one page (its params, its order)."""
    return f"{API_BASE}{GPUS_PATH}?{urlencode({'page': page, 'page_size': DEFAULT_PAGE_SIZE})}"


def unknown_fields(model: type[BaseModel], data: Any, path: str = "") -> list[str]:
    """The keys of `data` (and of its nested models) that `model` does not know, by alias."""
    if not isinstance(data, dict):
        return []
    found = []
    for key, value in data.items():
        field = next((f for name, f in model.model_fields.items()
                      if key in (f.alias, name)), None)
        if field is None:
            found.append(f"{path}{key}")
        elif isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            found += unknown_fields(field.annotation, value, f"{path}{key}.")
    return found


def checked_page(body: Any) -> tuple[list[GPUAvailability], int]:
    """The page's items as the SDK's models and its totalCount; ShapeError names what is wrong
    (an error body sent with HTTP 200, a field missing, a field the SDK does not model)."""
    if not isinstance(body, dict) or not isinstance(body.get("items"), list) \
            or not isinstance(body.get("totalCount"), int):
        detail = body.get("detail") if isinstance(body, dict) else None
        raise ShapeError(f"no items/totalCount in the availability body"
                         f"{f': {detail}' if detail else ''}")
    if extra := sorted(set(body) - {"items", "totalCount"}):
        raise ShapeError(f"fields the SDK does not read in the page: {extra}")
    items = []
    for n, item in enumerate(body["items"]):
        if extra := unknown_fields(GPUAvailability, item):
            raise ShapeError(f"item {n}: fields GPUAvailability does not model: {extra}")
        try:
            items.append(GPUAvailability.model_validate(item))
        except PydanticValidationError as exc:
            raise ShapeError(f"item {n} is not a GPUAvailability: {exc}") from exc
    return items, body["totalCount"]


@cache
def provider_vendor(provider: str) -> tuple[str, str] | None:
    """(vendor, vendor_kind) for a provider slug; None for one no table names."""
    if source := CRAWLED_PROVIDERS.get(provider):
        spider = spider_class(source)
        return spider.vendor, spider.vendor_kind
    return OTHER_PROVIDERS.get(provider)


def gpu_text(offer: GPUAvailability) -> str:
    """"H100_80GB" and socket "SXM5" -> "H100 80GB SXM5" (card_catalog reads the rest)."""
    return " ".join(p for p in (offer.gpu_type.replace("_", " "), offer.socket) if p)


class PrimeintellectSpider(JsonApiSpider):
    name = "primeintellect"
    vendor = "Prime Intellect"          # the aggregator; each offer names its own provider
    vendor_kind = "marketplace"
    reaches_via = "aggregator"
    start_urls = [page_url(1)]
    offers_path = "items"
    api_key_required = True
    key_envs = ("PRIME_API_KEY",)
    bearer_key_env = "PRIME_API_KEY"
    keyed_path = ("the availability API (GET /api/v1/availability/gpus, Bearer key) as the "
                  "prime SDK sends it")
    min_offers = 5

    def api_request(self, url: str, json_body: Any = None, **kwargs: Any):
        headers = {"User-Agent": default_user_agent(), **kwargs.pop("headers", {})}
        return super().api_request(url, json_body, headers=headers, **kwargs)

    def offers(self, body: Any, response: Response) -> list:
        return checked_page(body)[0]

    def next_page(self, body: Any, response: Response) -> str | None:
        """The SDK's rule: the next page while fewer than totalCount items were read."""
        page = int(parse_qs(urlsplit(response.url).query).get("page", ["1"])[0])
        read = (page - 1) * DEFAULT_PAGE_SIZE + len(body["items"])
        return page_url(page + 1) if body["items"] and read < body["totalCount"] else None

    def parse_offer(self, offer: GPUAvailability, response: Response) -> Iterable[RawOffer]:
        stats = self.crawler.stats
        if offer.prepaid_time is not None:   # a prepaid term whose unit no source states
            stats.inc_value("primeintellect/prepaid_offers_not_read")
            return
        price = offer.prices.price
        if price == float("inf"):
            stats.inc_value("primeintellect/offers_without_price")
            return
        named = provider_vendor(offer.provider or "")
        if named is None:
            stats.inc_value("primeintellect/unnamed_providers")
            named = ((offer.provider or "unknown").replace("_", " ").title(), "gpu_cloud")
        vendor, vendor_kind = named
        community = offer.security == "community_cloud"
        place = offer.data_center or offer.country or "-"
        yield self.offer(
            response, vendor=vendor, vendor_kind=vendor_kind,
            sku=f"{offer.provider}:{offer.cloud_id}@{place}:{offer.security or '-'}",
            gpu_text=gpu_text(offer), gpu_count=offer.gpu_count, vram_gb=offer.gpu_memory,
            region_text=offer.country or "",
            offer_kind="spot" if offer.is_spot else "on_demand",
            price_amount=str(price), currency=offer.prices.currency, billing_period="hour",
            available=(True if offer.stock_status in IN_STOCK
                       else False if offer.stock_status in OUT_OF_STOCK else None),
            vcpus_text=_count(offer.vcpu.default_count),
            memory_text=_count(offer.memory.default_count, "GB"),
            vendor_data={"provider": offer.provider, "cloud_id": offer.cloud_id,
                         "data_center": offer.data_center, "security": offer.security,
                         "community": community, "stock_status": offer.stock_status,
                         "is_variable": offer.prices.is_variable},
        )


def _count(value: int | None, unit: str = "") -> str | None:
    return None if value is None else f"{value} {unit}".strip()
