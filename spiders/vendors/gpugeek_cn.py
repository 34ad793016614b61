"""GpuGeek (gpugeek.com): a GUESSED public GPU product list, a paged JSON API (no key).

No evidence of this endpoint exists: api.gpugeek.com is GpuGeek's LLM gateway, and the documented
instance API (https://gpugeek.com/docs/openapi, api-cloud.gpugeek.com) is enterprise-only with no
price-list fields read (docs/sources.md, gpugeek_cn). The URL, envelope and fields below
are a model, kept so the source's pipeline path stays exercised; sources.md says so.

Each product is a machine of 1, 2, 4 or 8 cards in one region, priced per machine per hour, day
and month in 元. Field names and URL are modeled (sources.md #18, unverified).

Machine specs: vCPUs from `cpu_num`, memory from `memory_gb`, disk from `system_disk_gb` (the
machine's, like its price).
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.items import RawOffer

API_URL = "https://api.gpugeek.com/api/product/gpu/list?page=1&page_size=20"
PERIODS = {"price_hour": "hour", "price_day": "day", "price_month": "month"}
_UNIT = {"hour": "时", "day": "天", "month": "月"}


class GpugeekCNSpider(JsonApiSpider):
    name = "gpugeek_cn"
    vendor = "GpuGeek"
    vendor_kind = "marketplace"
    start_urls = [API_URL]
    offers_path = "data.list"
    next_page_path = "data.next"
    min_offers = 40
    public_path = ("a guess: api.gpugeek.com/api/product/gpu/list (no evidence: that host is the "
                   "LLM gateway; the real instance API is enterprise-only)")

    def parse_offer(self, offer: dict, response: Response) -> Iterable[RawOffer]:
        for field, period in PERIODS.items():
            price = offer.get(field)
            # null: the period is not sold for this machine (8-card H800 monthly: "contact sales");
            # a 0 is not "not sold": it goes on, and normalization quarantines it as a price
            if price in (None, ""):
                continue
            yield self.offer(
                response,
                sku=str(offer["id"]), gpu_text=offer["gpu_name"], vram_gb=offer.get("gpu_memory"),
                gpu_count=int(offer["gpu_num"]), region_text=offer["region_name"],
                offer_kind="on_demand", price_amount=str(price), currency="CNY",
                billing_period=period,
                available=int(offer.get("idle_num") or 0) > 0,
                vendor_data={k: offer.get(k) for k in ("region_code", "idle_num", "status")},
                **machine_fields(offer),
            )


def machine_fields(product: dict) -> dict[str, str]:
    """vcpus_text, memory_text and disk_text of a product, with the unit its field names."""
    said = {}
    if product.get("cpu_num"):
        said["vcpus_text"] = str(product["cpu_num"])
    if product.get("memory_gb"):
        said["memory_text"] = f"{product['memory_gb']} GB"
    if product.get("system_disk_gb"):
        said["disk_text"] = f"系统盘 {product['system_disk_gb']} GB"
    return said
