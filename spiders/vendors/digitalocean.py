"""DigitalOcean: the Droplet sizes list of its API (`GET /v2/sizes`), GPU Droplets only, an hourly
and a monthly price per size and region. Key-only.

Where the knowledge comes from: gpuhunt's DigitalOcean provider and its test fixture
(dstackai/gpuhunt src/gpuhunt/providers/digitalocean.py and src/tests/providers/
test_digitalocean.py @ 35841515): GET https://api.digitalocean.com/v2/sizes?per_page=500 with
"Authorization: Bearer <DIGITAL_OCEAN_API_KEY>"; `sizes[]` with slug, memory (MB), vcpus,
price_hourly, price_monthly, regions (the regions it is sold in now; empty: not available),
description, and for a GPU Droplet gpu_info {count, vram {amount, unit}, model ("nvidia_h100",
"amd_mi300x")}. A size without gpu_info is a CPU Droplet: skipped and counted.

The prices are the whole Droplet's (all its GPUs): normalization divides by gpu_info.count.
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.items import RawOffer

SIZES_URL = "https://api.digitalocean.com/v2/sizes?per_page=500"
PRICES = {"price_hourly": "hour", "price_monthly": "month"}


class DigitaloceanSpider(JsonApiSpider):
    name = "digitalocean"
    vendor = "DigitalOcean"
    vendor_kind = "gpu_cloud"
    start_urls = [SIZES_URL]
    offers_path = "sizes"
    api_key_required = True
    key_envs = ("DIGITAL_OCEAN_API_KEY",)
    bearer_key_env = "DIGITAL_OCEAN_API_KEY"
    keyed_path = "the Droplet sizes of the API (GET /v2/sizes, Bearer token), as gpuhunt reads it"
    min_offers = 2

    def parse_offer(self, size: dict, response: Response) -> Iterable[RawOffer]:
        gpu = size.get("gpu_info")
        if not gpu:
            self.skip("a CPU Droplet size (no gpu_info)")
            return
        for field, period in PRICES.items():
            if size.get(field) in (None, ""):
                continue
            for region in size.get("regions") or []:
                yield self.offer(
                    response, sku=size["slug"], gpu_text=gpu["model"], gpu_count=gpu["count"],
                    region_text=region, offer_kind="on_demand", price_amount=size[field],
                    currency="USD", billing_period=period, available=size.get("available"),
                    vcpus=size.get("vcpus"), memory=size.get("memory"), memory_unit="MB",
                    vendor_data={"description": size.get("description"),
                                 "gpu_vram": gpu.get("vram"), "field": field})
