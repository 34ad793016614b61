"""Google Cloud: every GPU model it prices (A100, H100, H200, B200, L4, T4, V100 ...), on-demand
and spot, per region.

Prices are for the GPU alone: the VM's vCPUs and memory are billed on top (host + accelerator).
Without a key the public GPU pricing page is read (static HTML, a table per GPU model); with
GCP_API_KEY the Cloud Billing Catalog API is paged instead. Which cards are read is
normalization's decision (spiders/parsing/card_catalog.csv): a GPU it does not know (P100, K80)
is quarantined there with the reason. In the API, SKUs outside the GPU resource group (vCPU, RAM)
are skipped, counted in `gcp/non_gpu_skus_skipped`; GPU SKUs that are not a plain on-demand or
spot GPU-hour (commitments, Virtual Workstation licences, reservations, sole tenancy: the SKUs
SkyPilot's fetch_gcp.py also prunes) are skipped, counted in `gcp/gpu_skus_other_pricing`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal
from urllib.parse import urlencode

from scrapy.http import Response

from spiders.base import GpuPriceSpider
from spiders.base.html_table import cell_text
from spiders.items import RawOffer

PAGE_URL = "https://cloud.google.com/compute/gpus-pricing"
API_URL = "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus"  # Compute Engine
# Page column header -> offer kind; every cell is per GPU per hour.
PRICE_COLUMNS = {"On-demand price per GPU (USD per hour)": "on_demand",
                 "Spot price per GPU (USD per hour)": "spot"}
# The description ("Nvidia A100 80GB GPU running in Americas", "Nvidia B200 (1 gpu slice) running
# in ...") is a spelling parse_gpu reads. These words say the price is not the GPU-hour alone.
OTHER_PRICING = re.compile(r"Virtual Workstation|Reserved|Sole Tenancy|Commitment|DWS", re.I)
API_KINDS = {"OnDemand": "on_demand", "Preemptible": "spot"}


class GcpSpider(GpuPriceSpider):
    name = "gcp"
    vendor = "Google Cloud"
    vendor_kind = "hyperscaler"
    api_key_env = "GCP_API_KEY"
    min_offers = 10

    async def start(self):
        if self.api_key():
            yield self._api_request(API_URL)
        else:
            yield self.request(PAGE_URL, callback=self.parse_page)

    def _api_request(self, url: str):
        # The key goes in a header, not in ?key=: URLs are logged by Scrapy and kept in the raw
        # archive, request headers are neither.
        return self.request(url, callback=self.parse_skus,
                            headers={"X-Goog-Api-Key": self.api_key()})

    def parse_page(self, response: Response) -> Iterable[RawOffer]:
        sections = response.css("section.gpu-model")
        if not sections:
            raise ValueError(f"gcp: no GPU price tables (section.gpu-model) on {response.url}")
        for section in sections:
            gpu_text = cell_text(section.css("h3")[0])
            headers = [cell_text(th) for th in section.css("table thead th")]
            missing = [h for h in ["Region", *PRICE_COLUMNS] if h not in headers]
            if missing:
                raise ValueError(f"gcp: table headers {missing} not found for {gpu_text} "
                                 f"(found {headers})")
            for tr in section.css("table tbody tr"):
                cells = dict(zip(headers, (cell_text(td) for td in tr.css("td")), strict=False))
                for column, kind in PRICE_COLUMNS.items():
                    if not re.search(r"\d", cells.get(column, "")):
                        continue  # "Not available": no spot market in this region
                    yield self.offer(response, sku=gpu_text, gpu_text=gpu_text, gpu_count=1,
                                     region_text=cells["Region"], offer_kind=kind,
                                     price_text=cells[column], billing_period="hour",
                                     available=None,
                                     vendor_data={"location": cells.get("Location")})

    def parse_skus(self, response: Response) -> Iterable:
        body = response.json()
        stats = self.crawler.stats
        for sku in body.get("skus", []):
            category = sku.get("category", {})
            if category.get("resourceGroup") != "GPU":
                stats.inc_value("gcp/non_gpu_skus_skipped")
                continue
            kind = API_KINDS.get(category.get("usageType"))
            pricing = sku.get("pricingInfo") or [{}]
            expression = pricing[0].get("pricingExpression") or {}
            if (kind is None or OTHER_PRICING.search(sku["description"])
                    or expression.get("usageUnit") != "h"):
                stats.inc_value("gcp/gpu_skus_other_pricing")
                continue
            price = expression["tieredRates"][0]["unitPrice"]
            # proto3 JSON leaves out zero fields: 0.35 comes as {"nanos": 350000000}, no "units".
            amount = Decimal(price.get("units") or 0) + Decimal(price.get("nanos") or 0) / 10**9
            currency = price["currencyCode"]
            for region in sku["serviceRegions"]:
                yield self.offer(response, sku=sku["skuId"], gpu_text=sku["description"],
                                 gpu_count=1, region_text=region, offer_kind=kind,
                                 price_amount=str(amount), currency=currency,
                                 billing_period="hour", price_text=f"{amount} {currency}/h",
                                 available=None, vendor_data={"description": sku["description"],
                                                              "usageType": category["usageType"]})
        if token := body.get("nextPageToken"):
            yield self._api_request(f"{API_URL}?{urlencode({'pageToken': token})}")
