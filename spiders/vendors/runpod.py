"""RunPod: the public GraphQL API (POST /graphql, no key), GPU pod prices per GPU per hour.

RunPod quotes one list price per GPU type and tier worldwide (its catalog repeats 1.39 for the
A100 80GB in all 48 datacenters); the response's only placement data is which datacenter lists
the card (`dataCenters.gpuAvailability`). So the spider emits the prices once per datacenter of a
fixed handful that lists the GPU: "this card is rentable in US-TX-3 at the list price". Those rows
are replicated by construction, not independent regional prices. Community hosts are not pinned
to these datacenters either; their price is still attached to the same places, sku "| community".
A datacenter listing the card with stockStatus null is sold out: the offer stays, available=False
(the price did not vanish, and capacity coming back is the signal we track).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import GpuPriceSpider
from spiders.items import RawOffer

API_URL = "https://api.runpod.io/graphql"
QUERY = """query GpuPrices($lowestPriceInput: GpuLowestPriceInput) {
  gpuTypes { id displayName memoryInGb securePrice communityPrice oneMonthPrice threeMonthPrice
    sixMonthPrice lowestPrice(input: $lowestPriceInput) { minimumBidPrice uninterruptablePrice
    stockStatus } }
  dataCenters { id name location gpuAvailability { gpuTypeId stockStatus } }
}"""
BODY = {"query": QUERY, "variables": {"lowestPriceInput": {"gpuCount": 1}}}
GPU_IDS = {"NVIDIA A100 80GB PCIe", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3",
           "NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA GeForce RTX 4090"}
DATACENTERS = ("US-TX-3", "US-GA-1", "EU-RO-1", "EU-SE-1", "CA-MTL-1", "AP-JP-1")
# sku suffix -> (offer kind, price field). The *MonthPrice fields are per-GPU *hourly* rates
# under a 1/3/6-month commitment (a savings plan), not monthly totals: reserved, billed per hour.
PRICES = (("secure", "on_demand", "securePrice"), ("community", "on_demand", "communityPrice"),
          ("spot", "spot", "minimumBidPrice"), ("reserved 1 month", "reserved", "oneMonthPrice"),
          ("reserved 3 months", "reserved", "threeMonthPrice"),
          ("reserved 6 months", "reserved", "sixMonthPrice"))


class RunpodSpider(GpuPriceSpider):
    name = "runpod"
    vendor = "RunPod"
    vendor_kind = "gpu_cloud"
    min_offers = 20

    async def start(self):
        yield self.request(API_URL, method="POST", body=json.dumps(BODY),
                           headers={"Content-Type": "application/json"})

    def parse(self, response: Response) -> Iterable[RawOffer]:
        data = response.json().get("data") or {}
        if not data.get("gpuTypes") or not data.get("dataCenters"):
            raise ValueError(f"runpod: no gpuTypes/dataCenters in {response.url}: "
                             f"{response.text[:300]}")
        stock = {(dc["id"], a["gpuTypeId"]): a["stockStatus"] for dc in data["dataCenters"]
                 if dc["id"] in DATACENTERS for a in dc.get("gpuAvailability") or []}
        for gpu in data["gpuTypes"]:
            if gpu["id"] not in GPU_IDS:
                continue  # RTX A6000, L40S, ...: not a tracked card
            prices = {**gpu, **(gpu.get("lowestPrice") or {})}
            for dc in DATACENTERS:
                if (dc, gpu["id"]) not in stock:
                    continue
                status = stock[dc, gpu["id"]]
                for tier, kind, field in PRICES:
                    if prices.get(field):
                        yield self.offer(
                            response, sku=f"{gpu['id']} | {tier}", gpu_text=gpu["displayName"],
                            gpu_count=1, vram_gb=gpu["memoryInGb"], region_text=dc,
                            offer_kind=kind, price_amount=str(prices[field]), currency="USD",
                            billing_period="hour", price_text=f"${prices[field]}/GPU/hr",
                            available=status is not None,
                            vendor_data={"field": field, "stockStatus": status,
                                         "gpuTypeId": gpu["id"]})
