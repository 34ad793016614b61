"""Vultr: the public plan listings (no key): cloud GPU plans incl. fractional A100s, and bare metal.

Every plan lists both an hourly price and a monthly one (Vultr bills hourly up to the monthly
figure), per location in `locations[]`; bare metal adds preemptible (spot) hourly and monthly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import GpuPriceSpider
from spiders.items import RawOffer

PLANS_URL = "https://api.vultr.com/v2/plans?type=all&per_page=500"
METAL_URL = "https://api.vultr.com/v2/plans-metal?per_page=500"
# Cloud GPU plans are NVIDIA vGPU partitions of an 80 GB A100 (vcg-a100-1c-6g-4vram = 4 GB of it):
# the slice is named by its memory so the fraction is vram/80 (parse_gpu reads "A100 80GB" with
# a 20 GB hint as a contradiction, not a slice).
VCG_CARDS = {"NVIDIA_A100": ("A100 80GB", 80)}
# Bare-metal plan ids carry the GPUs: vbm-112c-2048gb-8-h100-gpu. Both are HGX (SXM) boards.
METAL_RE = re.compile(r"-(\d+)-(a100|h100)-gpu$")
METAL_CARDS = {"a100": "A100 80GB SXM4", "h100": "H100 80GB SXM5"}
# price field -> (offer kind, billing period)
PRICES = {"hourly_cost": ("on_demand", "hour"), "monthly_cost": ("on_demand", "month"),
          "hourly_cost_preemptible": ("spot", "hour"),
          "monthly_cost_preemptible": ("spot", "month")}


class VultrSpider(GpuPriceSpider):
    name = "vultr"
    vendor = "Vultr"
    vendor_kind = "gpu_cloud"
    min_offers = 20

    async def start(self):
        yield self.request(PLANS_URL)
        yield self.request(METAL_URL)

    def parse(self, response: Response) -> Iterable:
        body = response.json()
        key = "plans_metal" if "/plans-metal" in response.url else "plans"
        if not isinstance(body.get(key), list):
            raise ValueError(f"vultr: no list {key!r} in {response.url}")
        for plan in body[key]:
            yield from self.parse_plan(plan, response)
        # Vultr pages with a cursor in meta.links.next ("" on the last page).
        cursor = ((body.get("meta") or {}).get("links") or {}).get("next")
        if cursor:
            base = response.url.split("&cursor=")[0]
            yield self.request(f"{base}&cursor={cursor}")

    def parse_plan(self, plan: dict, response: Response) -> Iterable[RawOffer]:
        if card := VCG_CARDS.get(plan.get("gpu_type")):
            name, card_gb = card
            vram, count = plan["gpu_vram_gb"], 1
            gpu_text = name if vram >= card_gb else f"{name} vGPU {vram}GB"
        elif m := METAL_RE.search(plan["id"]):
            count, gpu_text, vram = int(m[1]), METAL_CARDS[m[2]], None
        else:
            return  # CPU plans, A40/L40S/A16 cloud GPUs: not tracked cards
        for field, (kind, period) in PRICES.items():
            price = plan.get(field)
            if not price:
                continue
            for location in plan.get("locations") or []:
                yield self.offer(
                    response, sku=plan["id"], gpu_text=gpu_text, gpu_count=count, vram_gb=vram,
                    region_text=location, offer_kind=kind, price_amount=str(price),
                    currency="USD", billing_period=period,
                    price_text=f"${price}/{'hr' if period == 'hour' else 'mo'}", available=True,
                    vendor_data={"field": field, "gpu_type": plan.get("gpu_type"),
                                 "type": plan.get("type")})
