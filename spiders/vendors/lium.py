"""Lium: the marketplace's public nodes feed (no key; the docs invite ingesters), one offer per
rentable node at its per-GPU hourly ask.

Where the knowledge comes from: the feed's documentation (https://docs.lium.io/developers/
public-nodes-feed, quoted in jwilliamross/compute-curve docs/audit/2026-10-05_data_sources_audit.md
@ aaa1191f §2.9: "Every GPU node currently rentable on Lium, as one unauthenticated JSON call",
60 requests per minute per IP, rebuilt at most once per minute), and two public clients at a
commit: gpuhunt's Lium provider and its feed recorded live on 2026-09-10 (dstackai/gpuhunt
src/gpuhunt/providers/lium.py and src/tests/providers/test_lium.py @ 168f678a), and SkyPilot's
catalog fetcher (skypilot-org/skypilot sky/catalog/data_fetchers/fetch_lium.py @ 43352db4).
The body is `{generated_at, count, nodes[]}`; a node has id, gpu_model, gpu_count,
available_gpu_count, min_rentable_gpu_count, price_per_gpu_hour, price_per_node_hour,
gpu_memory_gb, cpu_count, ram_gb, disk_gb (whole-node values), tier ("secure" | "spot"),
country, country_code, region (a subdivision code: "MS", "13"), city, rent_url.

The offer is the node as listed: its GPUs at `price_per_gpu_hour` (one card's hour), with the
node's CPUs, RAM and disk; a node rents in part too (any count from min_rentable_gpu_count to
available_gpu_count, with a proportional share of the host), kept in vendor_data. A "spot" node
can be taken back by its provider: a spot offer. The place is the subdivision with the country
code ("MS, US"), read by normalization; the city stays in vendor_data.
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.items import RawOffer

NODES_URL = "https://lium.io/api/public/v1/nodes"
TIERS = {"secure": "on_demand", "spot": "spot"}


def place(node: dict) -> str:
    """"MS, US" from the node's subdivision code and country code; the code alone without one."""
    return ", ".join(str(p) for p in (node.get("region"), node.get("country_code")) if p)


class LiumSpider(JsonApiSpider):
    name = "lium"
    vendor = "Lium"
    vendor_kind = "marketplace"
    start_urls = [NODES_URL]
    offers_path = "nodes"
    min_offers = 3

    def parse_offer(self, node: dict, response: Response) -> Iterable[RawOffer]:
        if not node.get("price_per_gpu_hour") or not node.get("gpu_model"):
            self.skip("a node without gpu_model or price_per_gpu_hour")
            return
        if node.get("tier") not in TIERS:
            self.skip(f"tier {node.get('tier')!r}, neither secure nor spot")
            return
        free, least = node.get("available_gpu_count"), node.get("min_rentable_gpu_count")
        yield self.offer(
            response, sku=node["id"], gpu_text=node["gpu_model"], gpu_count=node["gpu_count"],
            vram=node.get("gpu_memory_gb"), vram_unit="GB", price_per_card=True,
            region_text=place(node), offer_kind=TIERS[node["tier"]],
            price_amount=node["price_per_gpu_hour"], currency="USD", billing_period="hour",
            available=None if free is None else free >= (least or 1),
            vcpus=node.get("cpu_count"), memory=node.get("ram_gb"), memory_unit="GB",
            disk=node.get("disk_gb"), disk_unit="GB",
            vendor_data={"available_gpu_count": free, "min_rentable_gpu_count": least,
                         "price_per_node_hour": node.get("price_per_node_hour"),
                         "city": node.get("city"), "country": node.get("country"),
                         "tier": node["tier"], "rent_url": node.get("rent_url")})
