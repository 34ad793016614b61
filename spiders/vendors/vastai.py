"""vast.ai: the public marketplace search (POST /api/v0/bundles/, no key), one offer per machine.

Each listing is a host's machine (or part of one): `dph_base` is the on-demand USD/hour for all
`num_gpus` cards without storage, `min_bid` the interruptible (spot) floor for the same bundle.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.items import RawOffer

API_URL = "https://console.vast.ai/api/v0/bundles/"
# vast's search syntax: field -> {operator: value}; no cursor, so one big ordered page.
QUERY = {
    "gpu_name": {"in": ["RTX 4090", "A100 PCIE", "A100 SXM4", "H100 SXM", "H100 PCIE", "H100 NVL"]},
    "rentable": {"eq": True},
    "rented": {"eq": False},
    "order": [["score", "desc"]],
    "limit": 3000,
}
_KEPT = ("machine_id", "host_id", "dph_total", "storage_cost", "disk_space", "datacenter",
         "hosting_type", "verification", "reliability2", "geolocation")


class VastaiSpider(JsonApiSpider):
    name = "vastai"
    vendor = "vast.ai"
    vendor_kind = "marketplace"
    offers_path = "offers"
    min_offers = 10

    async def start(self):
        yield self.request(API_URL, method="POST", body=json.dumps(QUERY),
                           headers={"Content-Type": "application/json"})

    def parse_offer(self, offer: dict, response: Response) -> Iterable[RawOffer]:
        if not offer.get("geolocation"):
            # Hosts may hide their location; an offer with no place cannot enter regional stats.
            self.logger.info("vastai: skipping offer %s without geolocation", offer.get("id"))
            return
        common = dict(
            sku=str(offer["id"]), gpu_text=offer["gpu_name"], gpu_count=offer["num_gpus"],
            # gpu_ram is MB per card: 49140 MB says a 48 GB modded "RTX 4090", a different SKU.
            vram_gb=round(offer["gpu_ram"] / 1024, 2), region_text=offer["geolocation"],
            currency="USD", billing_period="hour", available=True,
            vendor_data={k: offer.get(k) for k in _KEPT},
        )
        prices = (("on_demand", offer.get("dph_base")), ("spot", offer.get("min_bid")))
        for kind, price in prices:
            if price:  # a listing without a bid floor has no spot offer
                yield self.offer(response, offer_kind=kind, price_amount=str(price),
                                 price_text=f"${price}/hr", **common)
