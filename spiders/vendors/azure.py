"""Microsoft Azure: the public Retail Prices API (no key), A100 and H100 VMs, every region."""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.items import RawOffer

# ND96asr_v4 (8x A100 40GB) has no "A100" in its SKU name, hence the explicit clause.
_FILTER = ("serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and "
           "(contains(armSkuName,'A100') or contains(armSkuName,'H100') "
           "or armSkuName eq 'Standard_ND96asr_v4')")
API_URL = ("https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview"
           f"&$filter={quote(_FILTER)}")

# armSkuName pattern -> (card as Azure documents it, cards per VM)
GPU_SKUS: dict[str, tuple[str, int]] = {
    r"Standard_NC24ads_A100_v4": ("A100 80GB PCIe", 1),
    r"Standard_NC48ads_A100_v4": ("A100 80GB PCIe", 2),
    r"Standard_NC96ads_A100_v4": ("A100 80GB PCIe", 4),
    r"Standard_ND96asr_v4": ("A100 40GB SXM4", 8),
    r"Standard_ND96amsr_A100_v4": ("A100 80GB SXM4", 8),
    r"Standard_NC40ads_H100_v5": ("H100 NVL", 1),
    r"Standard_NC80adis_H100_v5": ("H100 NVL", 2),
    r"Standard_ND96isr_H100_v5": ("H100 80GB SXM5", 8),
}


class AzureSpider(JsonApiSpider):
    name = "azure"
    vendor = "Microsoft Azure"
    vendor_kind = "hyperscaler"
    start_urls = [API_URL]
    offers_path = "Items"
    next_page_path = "NextPageLink"
    min_offers = 20

    def parse_offer(self, offer: dict, response: Response) -> Iterable[RawOffer]:
        names = f"{offer.get('productName', '')} {offer.get('skuName', '')}"
        # Windows meters carry the OS licence ("Windows", some H100 ones "Win"); Low Priority
        # meters were retired in 2025. Neither is a GPU price.
        if re.search(r"\bWin(dows)?\b|Low Priority", names) or offer.get("unitOfMeasure") != "1 Hour":
            return
        card = next((v for k, v in GPU_SKUS.items() if re.fullmatch(k, offer["armSkuName"])), None)
        if card is None:
            self.logger.info("azure: skipping unmapped SKU %s", offer["armSkuName"])
            return
        gpu_text, gpu_count = card
        spot = " Spot" in offer.get("skuName", "") or " Spot" in offer.get("meterName", "")
        yield self.offer(
            response,
            sku=offer["armSkuName"], gpu_text=gpu_text, gpu_count=gpu_count,
            region_text=offer["armRegionName"], offer_kind="spot" if spot else "on_demand",
            price_amount=str(offer["retailPrice"]), currency=offer["currencyCode"],
            billing_period="hour", price_text=f"{offer['retailPrice']} {offer['currencyCode']}/hour",
            available=True,
            vendor_data={k: offer.get(k) for k in ("meterId", "skuName", "location",
                                                   "effectiveStartDate")},
        )
