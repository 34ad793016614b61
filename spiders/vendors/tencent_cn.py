"""腾讯云 Tencent Cloud: the JSON behind the public CVM price calculator, one GET per region.

No browser needed: the calculator page fetches this JSON itself. Each instance carries its
pay-as-you-go (按量计费), monthly (包年包月) and spot (竞价实例) prices as decimal strings in CNY;
a price the family is not sold at is null (HCC clusters are monthly only).

Machine specs: vCPUs from `cpu`, memory from `memory` (GB, as the CVM API's Memory); no disk.
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.base.json_api import dig
from spiders.items import RawOffer

API_URL = "https://buy.cloud.tencent.com/api/price/cvm/gpu?region={}"
REGIONS = ("ap-beijing", "ap-shanghai", "ap-guangzhou", "ap-nanjing", "ap-chengdu", "ap-chongqing")
# price field -> (offer kind, billing period)
PRICES: dict[str, tuple[str, str]] = {
    "postpaidByHour": ("on_demand", "hour"),
    "prepaidMonthly": ("on_demand", "month"),
    "spotByHour": ("spot", "hour"),
}
EXTRAS = ("instanceFamily", "zone")  # kept in vendor_data


class TencentCNSpider(JsonApiSpider):
    name = "tencent_cn"
    vendor = "腾讯云 Tencent Cloud"
    vendor_kind = "hyperscaler"
    start_urls = [API_URL.format(region) for region in REGIONS]
    offers_path = "data.instances"
    min_offers = 20

    def offers(self, body: dict, response: Response) -> list:
        # Errors come back as HTTP 200 with a non-zero code: fail loudly instead of "0 offers".
        if body.get("code") != 0:
            raise ValueError(f"{self.name}: API error {body.get('code')!r} "
                             f"({body.get('message')}) on {response.url}")
        return super().offers(body, response)

    def parse_offer(self, offer: dict, response: Response) -> Iterable[RawOffer]:
        data = response.json()["data"]  # Scrapy caches the decoded body
        for field, (offer_kind, period) in PRICES.items():
            amount = dig(offer, f"price.{field}")
            if amount in (None, ""):
                continue
            yield self.offer(
                response, sku=offer["instanceType"], gpu_text=offer["gpu"],
                gpu_count=offer["gpuCount"], region_text=data["region"], offer_kind=offer_kind,
                price_amount=str(amount), currency=data["currency"], billing_period=period,
                price_text=f"{amount} {data['currency']}/{period}",
                available=not offer.get("soldOut", False),
                vendor_data={"price_field": field, **{k: offer.get(k) for k in EXTRAS}},
                # the instance's own; no local disk is listed (cloud disks are bought apart)
                vcpus_text=_text(offer.get("cpu")), memory_text=_text(offer.get("memory"), " GB"),
            )


def _text(number: int | None, unit: str = "") -> str | None:
    """A number the API gives, with the unit its field is in; None when not given."""
    return None if number in (None, "") else f"{number}{unit}"
