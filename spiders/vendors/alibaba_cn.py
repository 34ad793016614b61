"""阿里云 Alibaba Cloud: the ECS GPU price page, a hash-routed JavaScript app rendered in Chromium.

The page fetches its price list as JSON and only then draws the table (instance type, card, region,
stock, 按量付费 / 包年包月 / 抢占式), so the spider reads the rendered table as users see it.
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import HtmlTableSpider
from spiders.base.html_table import availability
from spiders.items import RawOffer

# Price column -> (offer kind, billing period). Spot is hourly too, so it cannot share the base
# class's period -> column map.
PRICE_COLUMNS: dict[str, tuple[str, str]] = {
    "按量付费": ("on_demand", "hour"),
    "包年包月": ("on_demand", "month"),
    "抢占式": ("spot", "hour"),
}
NOT_OFFERED = {"", "-", "—", "--"}  # e.g. no spot market for bare-metal or in that region


class AlibabaCNSpider(HtmlTableSpider):
    name = "alibaba_cn"
    vendor = "阿里云 Alibaba Cloud"
    vendor_kind = "hyperscaler"
    render_js = True
    start_urls = ["https://www.aliyun.com/price/product#/ecs/gpu"]
    wait_for = "table.price-table tbody tr"
    rows = "table.price-table tbody tr"
    columns = {"sku": "实例规格", "gpu": "GPU", "memory": "显存", "gpu_count": "GPU数",
               "region_text": "地域", "available": "库存"}
    min_offers = 30

    def _expected_headers(self) -> list[str]:
        return [*super()._expected_headers(), *PRICE_COLUMNS]

    def parse_row(self, cells: dict[str, str], response: Response) -> Iterable[RawOffer]:
        gpu, memory = self.column(cells, "gpu") or "", self.column(cells, "memory") or ""
        # On a vGPU row ("NVIDIA A100 1/2") 显存 is the slice's memory, and is marked so: a bare
        # "A100 1/2 40GB" reads as half of an A100 40GB, not as a 40 GB half of the 80 GB card.
        gpu_text = f"{gpu} (vGPU {memory})" if "/" in gpu else f"{gpu} {memory}".strip()
        for header, (offer_kind, period) in PRICE_COLUMNS.items():
            price_text = cells.get(header, "").strip()
            if price_text in NOT_OFFERED:
                continue
            yield self.offer(
                response, sku=self.column(cells, "sku"), gpu_text=gpu_text,
                gpu_count=self.column(cells, "gpu_count"),
                region_text=self.column(cells, "region_text"),
                available=availability(self.column(cells, "available")),
                offer_kind=offer_kind, price_text=price_text, billing_period=period,
                vendor_data={"row": cells},
            )
