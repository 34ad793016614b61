"""Microsoft Azure: the public Retail Prices API (no key), GPU VMs of every card Azure rents that
card_catalog.csv knows (A100, H100, H200, MI300X, A10, T4), every region.

A VM size is read through GPU_SKUS (its card and GPUs per VM, from Azure's VM size pages). A size
the filter returns but the table lacks is not dropped: it is yielded with the gpu_count
`UNMAPPED_COUNT`, which normalization quarantines (stage "card") with that text as the reason,
and counted in the stat `azure/unmapped_gpu_skus` with a warning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote

from scrapy.http import Response

from spiders.base import JsonApiSpider
from spiders.items import RawOffer

# Every size naming a catalog card Azure rents; ND96asr_v4 (8x A100 40GB) has no "A100" in its
# name, hence the explicit clause. "_A10_" and "_T4_" do not match A100 or other names.
_FILTER = ("serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and "
           "(contains(armSkuName,'A100') or contains(armSkuName,'H100') "
           "or contains(armSkuName,'H200') or contains(armSkuName,'MI300X') "
           "or contains(armSkuName,'_A10_') or contains(armSkuName,'_T4_') "
           "or armSkuName eq 'Standard_ND96asr_v4')")
API_URL = ("https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview"
           f"&$filter={quote(_FILTER)}")

# armSkuName pattern -> (card as Azure documents it, cards per VM). NVadsA10_v5 sizes are vGPU
# partitions of one A10, named by their memory (NV6ads: 4 GB of 24 = 1/6).
GPU_SKUS: dict[str, tuple[str, int]] = {
    r"Standard_NC24ads_A100_v4": ("A100 80GB PCIe", 1),
    r"Standard_NC48ads_A100_v4": ("A100 80GB PCIe", 2),
    r"Standard_NC96ads_A100_v4": ("A100 80GB PCIe", 4),
    r"Standard_ND96asr_v4": ("A100 40GB SXM4", 8),
    r"Standard_ND96amsr_A100_v4": ("A100 80GB SXM4", 8),
    r"Standard_NC40ads_H100_v5": ("H100 NVL", 1),
    r"Standard_NC80adis_H100_v5": ("H100 NVL", 2),
    r"Standard_NCC40ads_H100_v5": ("H100 NVL", 1),          # confidential computing
    r"Standard_ND96isr_H100_v5": ("H100 80GB SXM5", 8),
    r"Standard_ND96isr_H200_v5": ("H200 141GB SXM5", 8),
    r"Standard_ND96isr_MI300X_v5": ("MI300X 192GB", 8),
    r"Standard_NC(4|8|16)as_T4_v3": ("T4 16GB", 1),
    r"Standard_NC64as_T4_v3": ("T4 16GB", 4),
    r"Standard_NV6ads_A10_v5": ("A10 24GB vGPU 4GB", 1),
    r"Standard_NV12ads_A10_v5": ("A10 24GB vGPU 8GB", 1),
    r"Standard_NV18ads_A10_v5": ("A10 24GB vGPU 12GB", 1),
    r"Standard_NV36adm?s_A10_v5": ("A10 24GB", 1),
    r"Standard_NV72ads_A10_v5": ("A10 24GB", 2),
}
# The gpu_count of a size GPU_SKUS does not know: normalization cannot read it as a number and
# quarantines the offer with this text, so the size is seen (and added above), never guessed.
UNMAPPED_COUNT = "unknown: Azure VM size not in GPU_SKUS (spiders/vendors/azure.py)"


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
        if re.search(r"\bWin(dows)?\b|Low Priority", names):
            return
        if (unit := offer.get("unitOfMeasure")) != "1 Hour":   # named if it drops every row
            self.skip(f"unitOfMeasure {unit!r}, not '1 Hour'")
            return
        card = next((v for k, v in GPU_SKUS.items() if re.fullmatch(k, offer["armSkuName"])), None)
        if card is None:
            self.crawler.stats.inc_value("azure/unmapped_gpu_skus")
            self.logger.warning("azure: VM size %s is not in GPU_SKUS: its offer goes to "
                                "quarantine (stage card)", offer["armSkuName"])
        gpu_text, gpu_count = card or (offer["armSkuName"], UNMAPPED_COUNT)
        spot = " Spot" in offer.get("skuName", "") or " Spot" in offer.get("meterName", "")
        yield self.offer(
            response,
            sku=offer["armSkuName"], gpu_text=gpu_text, gpu_count=gpu_count,
            region_text=offer["armRegionName"], offer_kind="spot" if spot else "on_demand",
            price_amount=str(offer["retailPrice"]), currency=offer["currencyCode"],
            billing_period="hour",
            available=True,
            vendor_data={k: offer.get(k) for k in ("meterId", "skuName", "location",
                                                   "effectiveStartDate")},
        )
