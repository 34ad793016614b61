"""Oracle Cloud Infrastructure (OCI): the public price list (no key), GPU list prices per GPU-hour.

Where the knowledge comes from:
* the endpoint: Oracle's public price-list API behind its cost estimator,
  GET https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD, no key
  (ewyluda/gpu-price-index src/gpu_index/sources/oracle.py @ 1e77fb70, read daily since
  2026-09-29); gpuhunt reads the same catalogue as the estimator's products.json
  (dstackai/gpuhunt src/gpuhunt/providers/oci.py @ 35841515: currencyCodeLocalizations[] with
  currencyCode and prices[{model: PAY_AS_YOU_GO, value}]).
* the shape: `{"lastUpdated", "items": [{partNumber, displayName, metricName, serviceCategory,
  currencyCodeLocalizations}]}`, a trimmed real answer in ewyluda/gpu-price-index
  tests/fixtures/oracle.json @ 1e77fb70 (lastUpdated 2026-10-01).

A GPU part is priced per GPU-hour ("GPU Per Hour") and is the same in every commercial region
(the list names none), so an offer is placed in the US, Oracle's home market: country only, an
assumption as lambda_cloud's "us". The list names a part, not a shape or a card
("Compute - GPU - A100 - v2"), so PART_SHAPES says which bare-metal shape and card each GPU part
prices (the public client's table); a GPU part missing from it (GB200, MI355X, the older X7 / E4
generations) is skipped and counted by reason, never guessed. Parts of other services
(Cloud@Customer, VMware nodes, "Compute - GPU - Other") are not OCI cloud GPU rentals: skipped.

Preemptible capacity is 50 % of on-demand (Oracle's documented rule, gpuhunt's `oci-spot`): a
price the list does not state, so no spot offer is made here (a spider computes no price).
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.items import RawOffer

PRICE_LIST_URL = "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD"
GPU_METRIC = "GPU Per Hour"
CLOUD_GPU_CATEGORY = "Compute - GPU"
ON_DEMAND_MODEL = "PAY_AS_YOU_GO"
REGION = "us"
# part number -> (bare-metal shape, card, GPUs in the shape): the parts and shapes of
# ewyluda/gpu-price-index src/gpu_index/sources/oracle.py @ 1e77fb70 (PARTS); the GPU count is
# the one the shape's name states (BM.GPU.H100.8: 8). The A10 part prices every A10 shape
# (VM.GPU.A10.1/.2, BM.GPU.A10.4; gpuhunt's tests name VM.GPU.A10.2): one GPU, no shape.
PART_SHAPES: dict[str, tuple[str | None, str, int]] = {
    "B98415": ("BM.GPU.H100.8", "H100 80GB", 8),
    "B110519": ("BM.GPU.H200.8", "H200 141GB", 8),
    "B110978": ("BM.GPU.B200.8", "B200", 8),
    "B112237": ("BM.GPU.B300.8", "B300", 8),
    "B109485": ("BM.GPU.MI300X.8", "MI300X", 8),
    "B95907": ("BM.GPU.A100-v2.8", "A100 80GB", 8),
    "B109479": ("BM.GPU.L40S.4", "L40S", 4),
    "B95909": (None, "A10", 1),
}


class OciSpider(JsonApiSpider):
    name = "oci"
    vendor = "Oracle Cloud"
    vendor_kind = "hyperscaler"
    start_urls = [PRICE_LIST_URL]
    offers_path = "items"
    price_per_card = True   # every GPU part is priced per GPU-hour ("GPU Per Hour")
    min_offers = 5

    def parse_offer(self, item: dict, response: Response) -> Iterable[RawOffer]:
        if (item.get("metricName"), item.get("serviceCategory")) != (GPU_METRIC,
                                                                      CLOUD_GPU_CATEGORY):
            self.skip("not an OCI cloud GPU part priced per GPU-hour")
            return
        part = PART_SHAPES.get(item.get("partNumber", ""))
        if part is None:
            self.skip("GPU part with no known shape and card")
            return
        price = on_demand_usd(item)
        if price is None:
            self.skip("no USD pay-as-you-go price")
            return
        shape, card, gpus = part
        yield self.offer(
            response, sku=shape or item["partNumber"], gpu_text=card, gpu_count=gpus,
            region_text=REGION, offer_kind="on_demand", price_amount=str(price), currency="USD",
            billing_period="hour", available=None,
            vendor_data={"partNumber": item["partNumber"], "displayName": item.get("displayName"),
                         "metricName": item["metricName"], "shape": shape})


def on_demand_usd(item: dict) -> float | int | None:
    """The part's USD pay-as-you-go price as served, or None when the list gives none."""
    for localization in item.get("currencyCodeLocalizations") or []:
        if localization.get("currencyCode") != "USD":
            continue
        for price in localization.get("prices") or []:
            if price.get("model") == ON_DEMAND_MODEL and price.get("value") not in (None, ""):
                return price["value"]
    return None
