"""DataCrunch (now Verda): the public instance-type catalogue (no key), on-demand and spot prices.

Where the knowledge comes from:
* the endpoint: GET https://api.datacrunch.io/v1/instance-types answers without a key, as two
  public daily collectors call it (henryzhangpku/gpu-price-index
  src/gpuidx/providers/datacrunch.py @ 543a8973: "an unauthenticated instance-type catalogue";
  toolshedlabs-hash/gpu-price-feed providers/datacrunch.py @ aad9b329: "no key required").
  Verda's official SDK (the package `verda` 1.25.0, module verda/instance_types) GETs the same
  `/instance-types` under https://api.verda.com/v1 with an OAuth client id and secret; the keyless
  catalogue serves the same items, so no keyed path is needed.
* the shape: a JSON list of instance types, each with instance_type, price_per_hour and
  spot_price (strings, USD per instance-hour), currency, gpu{description "8x H100 SXM5 80GB",
  number_of_gpus}, cpu{number_of_cores}, memory{size_in_gigabytes}, gpu_memory, name, model
  (dstackai/gpuhunt src/tests/providers/test_verda.py @ 35841515: recorded
  `verda.instance_types.get()` items; the SDK's InstanceTypesService reads the same keys).

Each instance type is one on-demand offer (price_per_hour) and one spot offer (spot_price), for
the whole instance: the GPU count is number_of_gpus, the card the gpu description as written.
An instance type without GPUs is skipped, counted. The catalogue names no location (the
locations are FIN-01, FIN-02, ICE-01 in gpuhunt's fixture, one price for all): offers are placed
in Finland, country only, an assumption.
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.items import RawOffer

INSTANCE_TYPES_URL = "https://api.datacrunch.io/v1/instance-types"
REGION = "Finland"
# price field -> offer kind
PRICES = {"price_per_hour": "on_demand", "spot_price": "spot"}


class DatacrunchSpider(JsonApiSpider):
    name = "datacrunch"
    vendor = "DataCrunch"
    vendor_kind = "gpu_cloud"
    start_urls = [INSTANCE_TYPES_URL]
    min_offers = 6

    def offers(self, body: object, response: Response) -> list:
        if not isinstance(body, list):
            raise ValueError(f"datacrunch: expected a list of instance types from {response.url}")
        return body

    def parse_offer(self, item: dict, response: Response) -> Iterable[RawOffer]:
        gpu = item.get("gpu") or {}
        if not gpu.get("number_of_gpus"):
            self.skip("instance type without GPUs")
            return
        currency = str(item.get("currency") or "").upper()
        for field, kind in PRICES.items():
            price = item.get(field)
            if price in (None, ""):   # not sold this way; a "0" goes on to quarantine
                continue
            yield self.offer(
                response, sku=item["instance_type"], gpu_text=gpu.get("description"),
                gpu_count=gpu["number_of_gpus"], region_text=REGION, offer_kind=kind,
                price_amount=str(price), currency=currency, billing_period="hour",
                available=None, **machine(item),
                vendor_data={"field": field, "name": item.get("name"),
                             "model": item.get("model")})


def machine(item: dict) -> dict[str, object]:
    """The instance's vcpus and memory as served (memory.size_in_gigabytes is GB)."""
    said: dict[str, object] = {}
    if cores := (item.get("cpu") or {}).get("number_of_cores"):
        said["vcpus"] = cores
    if memory := (item.get("memory") or {}).get("size_in_gigabytes"):
        said.update(memory=memory, memory_unit="GB")
    return said
