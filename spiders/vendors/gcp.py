"""Google Cloud: every GPU model it prices (A100, H100, H200, B200, L4, T4, V100 ...), on-demand
and spot, per region.

Prices are for the GPU alone: the VM's vCPUs and memory are billed on top (host + accelerator).
Without a key the public GPU pricing page is read; with GCP_API_KEY the Cloud Billing Catalog API
is paged instead.

The page is rendered in Chromium (render_js), waiting for a row of the tables it reads: public
notes report today's page script-rendered ("cloud.google.com/compute/gpus-pricing returned
JS-rendered content", a GPU cost catalog's design notes; "not re-verified here (the page is
script-rendered)", a GCP deployment README), and no public scraper reads it as plain HTML. Its
markup is a GUESS (one `section.gpu-model` table per GPU model): no public scraper of today's page
was found. The only evidenced markup is an older one SkyPilot read, itself not plain HTML: the
prices sat in an iframe whose table had `cloud-pricer` cells with per-region `<code>-hourly`
attributes behind an Angular Material region selector (`md-option`) (zerotoone01/skypilot
sky/clouds/service_catalog/data_fetchers/fetch_gcp.py @ 128f0557); when GCP "significantly
changed the frontend implementation" of its pricing pages (skypilot-org/skypilot issue #1629)
SkyPilot moved to the Catalog API (PR #1642; skypilot-org/skypilot @ 952dd90a). Against it: a
2025 note reads prices server-rendered in cloud.google.com/compute/all-pricing (ddps-lab/spotlake
issue #485), another page. Chromium draws a server-rendered page as well, so the guess costs a
browser, not correctness. The keyed API path is JSON over plain HTTP: no Chromium page.

The API is evidenced: "You must have an API key to call the Cloud Billing Catalog API",
GET https://cloudbilling.googleapis.com/v1/services/SERVICE_ID/skus, pages of 5000 with
nextPageToken (https://cloud.google.com/billing/v1/how-tos/catalog-api); the key goes in the
X-Goog-Api-Key header (https://cloud.google.com/docs/authentication/api-keys-use), not in ?key=.
Descriptions come in several real forms ("Nvidia Tesla A100 80GB GPU running in Americas",
"Spot Preemptible Nvidia ...", "... GPU attached to Spot Preemptible VMs running in Tokyo"):
normalization's parse_gpu reads each; "... attached to DWS Defined Duration VMs ..." and
"Commitment v1: ..." SKUs are other pricing (usageType OnDemand for DWS), skipped here.

Which cards are read is normalization's decision (spiders/parsing/card_catalog.csv): a GPU it
does not know (P100, K80) is quarantined there with the reason. In the API, SKUs outside the GPU
resource group (vCPU, RAM) are skipped, counted in `gcp/non_gpu_skus_skipped`; GPU SKUs that are
not a plain on-demand or spot GPU-hour (commitments, Virtual Workstation licences, reservations,
sole tenancy: the SKUs SkyPilot's fetch_gcp.py also prunes; DWS) are skipped, counted in
`gcp/gpu_skus_other_pricing`.

The page, the default path, is read by HtmlTableSpider. The keyed API is a second source of another
shape (paged JSON) and a spider has one base, so `parse_skus` reads it and follows its page token.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal
from urllib.parse import urlencode

from scrapy.http import Response

from spiders.base import HtmlTableSpider
from spiders.base.json_api import checked_json
from spiders.items import RawOffer

PAGE_URL = "https://cloud.google.com/compute/gpus-pricing"
API_URL = "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus"  # Compute Engine
# The description ("Nvidia Tesla A100 80GB GPU running in Americas", "A4 Nvidia B200 (1 gpu slice)
# running in ...") is a spelling parse_gpu reads. These words say the price is not the plain
# on-demand or spot GPU-hour: licences, reservations (also "in Calendar Mode"), sole tenancy,
# commitments, Dynamic Workload Scheduler ("DWS Defined Duration", "DWS Calendar Mode").
OTHER_PRICING = re.compile(r"Virtual Workstation|Reserved|Sole Tenancy|Commitment|DWS|"
                           r"Calendar Mode", re.I)
API_KINDS = {"OnDemand": "on_demand", "Preemptible": "spot"}


class GcpSpider(HtmlTableSpider):
    name = "gcp"
    vendor = "Google Cloud"
    vendor_kind = "hyperscaler"
    api_key_env = "GCP_API_KEY"
    key_envs = ("GCP_API_KEY",)
    public_path = ("the public GPU pricing page cloud.google.com/compute/gpus-pricing "
                   "(markup a guess)")
    keyed_path = ("the Cloud Billing Catalog API (Compute Engine SKUs, paged; GCP_API_KEY in the "
                  "X-Goog-Api-Key header)")
    start_urls = [PAGE_URL]
    render_js = True                               # the page path; the keyed path turns it off
    wait_for = "section.gpu-model table tbody tr"  # a row of the tables parse reads
    # One table per GPU model, the model named in its section's heading; every cell is per GPU
    # per hour.
    tables = "section.gpu-model"
    rows = "table tbody tr"
    header = "table thead th"
    extra_cells = {"GPU": "ancestor::section[1]//h3"}
    columns = {"gpu_text": "GPU", "region_text": "Region"}
    prices = {"hour": "On-demand price per GPU (USD per hour)"}
    spot_prices = {"hour": "Spot price per GPU (USD per hour)"}
    min_offers = 10

    async def start(self):
        if self.api_key():
            self.render_js = False   # JSON over plain HTTP: request() sends it without Chromium
            yield self._api_request(API_URL)
        else:
            yield self.request(PAGE_URL)

    def _api_request(self, url: str):
        # The key goes in a header, not in ?key=: URLs are logged by Scrapy and kept in the raw
        # archive, request headers are neither.
        return self.request(url, callback=self.parse_skus,
                            headers={"X-Goog-Api-Key": self.api_key()})

    def parse_row(self, cells: dict[str, str], response: Response) -> Iterable[RawOffer]:
        for kind, period, _, price_text in self.price_cells(cells):
            if re.search(r"\d", price_text):   # else "Not available": no spot market here
                yield self.offer(response, sku=cells["GPU"], gpu_text=cells["GPU"], gpu_count=1,
                                 region_text=cells["Region"], offer_kind=kind,
                                 price_text=price_text, billing_period=period, available=None,
                                 vendor_data={"location": cells.get("Location")})

    def parse_skus(self, response: Response) -> Iterable:
        body = checked_json(response)
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
                                 billing_period="hour",
                                 available=None, vendor_data={"description": sku["description"],
                                                              "usageType": category["usageType"]})
        if token := body.get("nextPageToken"):
            yield self._api_request(f"{API_URL}?{urlencode({'pageToken': token})}")
