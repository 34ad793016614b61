"""RunPod: the public GraphQL API (POST /graphql, no key), GPU pod prices per GPU per hour.

The requests are the ones dstack's gpuhunt sends without a key (dstackai/gpuhunt
`src/gpuhunt/providers/runpod.py`, see data/snapshots/runpod/manifest.json): first the places,
`countryCodes` and `dataCenters { id name listed }`; then, per listed datacenter (Secure Cloud)
and per country code (Community Cloud), every GPU type with
`lowestPrice(input: {secureCloud, dataCenterId | countryCode, gpuCount: 1})`.

* A GPU type is offered at a place when its `lowestPrice.stockStatus` is set ("High", "Medium",
  "Low"); null (or the docs' "None") means not offered there *or* sold out, which the API does not
  tell apart, so no offer is emitted (as gpuhunt does). Community hosts are placed by country only.
* Prices are gpuhunt's: `securePrice` at a datacenter, `communityPrice` in a country, USD per GPU
  per hour. They are list prices, the same at every place; what varies is where a card is offered.
* `threeMonthPrice` / `sixMonthPrice` are read as the per-GPU hourly rate of RunPod's 3/6-month
  prepaid savings plans, Secure Cloud only. That unit is inferred (runpod/docs' own examples show
  both 0.204 and 500), so a rate not below the on-demand `securePrice` is not trusted: no offer,
  counted in the stat `runpod/savings_plan_rate_not_hourly`.
* Machine specs: vCPUs from `lowestPrice.minVcpu`, memory from `lowestPrice.minMemory` (GB), the
  smallest one-GPU pod at that place; no disk (the pod's volume is chosen and billed apart).
* Spot is gone (RunPod dropped spot pods on 2026-09-11; gpuhunt commit 310de51): `minimumBidPrice`
  is not read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scrapy import Request
from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.base.json_api import checked_json
from spiders.items import RawOffer

API_URL = "https://api.runpod.io/graphql"
PLACES_QUERY = "query GpuTypes { countryCodes dataCenters { id name listed } }"
PRICES_QUERY = """query GpuTypes($lowestPriceInput: GpuLowestPriceInput) {
  gpuTypes { lowestPrice(input: $lowestPriceInput) { uninterruptablePrice minVcpu minMemory
    stockStatus countryCode } id displayName memoryInGb securePrice communityPrice threeMonthPrice
    sixMonthPrice }
}"""
SAVINGS_PLANS = (("savings plan 3 months", "threeMonthPrice"),
                 ("savings plan 6 months", "sixMonthPrice"))
NOT_OFFERED = (None, "None", "")


def prices_body(*, secure: bool, place: str) -> dict[str, Any]:
    """The per-place request: a datacenter id (Secure Cloud) or a country code (Community)."""
    where = {"dataCenterId": place} if secure else {"countryCode": place}
    return {"query": PRICES_QUERY,
            "variables": {"lowestPriceInput": {"secureCloud": secure, **where, "gpuCount": 1}}}


class RunpodSpider(JsonApiSpider):
    name = "runpod"
    vendor = "RunPod"
    vendor_kind = "gpu_cloud"
    min_offers = 20

    async def start(self):
        yield self.api_request(API_URL, {"query": PLACES_QUERY}, callback=self.parse_places)

    def parse_places(self, response: Response) -> Iterable[Request]:
        """The first step: one prices query per listed datacenter and per country."""
        data = _data(response, "dataCenters", "countryCodes")
        places = [(dc["id"], True) for dc in data["dataCenters"] if dc.get("listed")]
        # the country list holds a null (hosts without a country)
        places += [(country, False) for country in data["countryCodes"] if country]
        for place, secure in places:
            yield self.api_request(API_URL, prices_body(secure=secure, place=place),
                                   cb_kwargs={"place": place, "secure": secure})

    def offers(self, body: dict, response: Response) -> list:
        return _data(response, "gpuTypes")["gpuTypes"]

    def parse_offer(self, gpu: dict, response: Response, place: str,
                    secure: bool) -> Iterable[RawOffer]:
        lowest = gpu.get("lowestPrice") or {}
        if lowest.get("stockStatus") in NOT_OFFERED:
            return
        tier, field = ("secure", "securePrice") if secure else ("community", "communityPrice")
        on_demand = gpu.get(field)
        # null: not offered in this tier; a 0 goes on, and normalization quarantines it
        if on_demand is not None:
            yield self._offer(response, gpu, place, tier, "on_demand", field, on_demand)
        if secure and on_demand is not None:
            yield from self._savings_plans(response, gpu, place, on_demand)

    def _savings_plans(self, response: Response, gpu: dict, place: str,
                       on_demand: float) -> Iterable[RawOffer]:
        for plan, field in SAVINGS_PLANS:
            rate = gpu.get(field)
            if rate is not None and 0 < on_demand <= rate:
                self.crawler.stats.inc_value("runpod/savings_plan_rate_not_hourly")
                self.logger.warning("runpod: %s %s=%s is not below securePrice %s: not read as "
                                    "an hourly rate", gpu["id"], field, rate, on_demand)
            elif rate is not None:
                yield self._offer(response, gpu, place, plan, "reserved", field, rate)

    def _offer(self, response: Response, gpu: dict, place: str, tier: str, kind: str,
               field: str, price: float) -> RawOffer:
        lowest = gpu["lowestPrice"]
        return self.offer(
            response, sku=f"{gpu['id']} | {tier}", gpu_text=gpu["displayName"], gpu_count=1,
            vram_gb=gpu["memoryInGb"], region_text=place, offer_kind=kind,
            price_amount=str(price), currency="USD", billing_period="hour",
            available=True,
            vendor_data={"field": field, "gpuTypeId": gpu["id"],
                         "stockStatus": lowest["stockStatus"],
                         "uninterruptablePrice": lowest.get("uninterruptablePrice"),
                         "countryCode": lowest.get("countryCode")},
            # asked with gpuCount 1, minVcpu / minMemory (GB) are the one-GPU pod this price buys
            **_served(vcpus=lowest.get("minVcpu"), memory=lowest.get("minMemory")))


def _served(vcpus: float | None, memory: float | None) -> dict[str, object]:
    """vcpus and memory as the API serves them (minMemory in GB); unset when not given."""
    said: dict[str, object] = {} if vcpus in (None, "") else {"vcpus": vcpus}
    return said if memory in (None, "") else {**said, "memory": memory, "memory_unit": "GB"}


def _data(response: Response, *fields: str) -> dict:
    """The `data` object with the fields this step needs, or a loud error quoting the body."""
    data = checked_json(response).get("data") or {}
    if any(not isinstance(data.get(f), list) for f in fields):
        raise ValueError(f"runpod: no {'/'.join(fields)} in {response.url}: "
                         f"{response.text[:300]}")
    return data
