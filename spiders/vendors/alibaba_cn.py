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
    prices = {"hour": "按量付费", "month": "包年包月"}
    spot_prices = {"hour": "抢占式"}
    # e.g. no spot market for bare-metal or in that region
    not_offered = frozenset({"-", "—", "--"})
    min_offers = 30

    def parse_row(self, cells: dict[str, str], response: Response) -> Iterable[RawOffer]:
        gpu, memory = self.column(cells, "gpu") or "", self.column(cells, "memory") or ""
        # On a vGPU row ("NVIDIA A100 1/2") 显存 is the slice's memory, and is marked so: a bare
        # "A100 1/2 40GB" reads as half of an A100 40GB, not as a 40 GB half of the 80 GB card.
        gpu_text = f"{gpu} (vGPU {memory})" if "/" in gpu else f"{gpu} {memory}".strip()
        for offer_kind, period, _, price_text in self.price_cells(cells):
            yield self.offer(
                response, sku=self.column(cells, "sku"), gpu_text=gpu_text,
                gpu_count=self.column(cells, "gpu_count"),
                region_text=self.column(cells, "region_text"),
                available=availability(self.column(cells, "available")),
                offer_kind=offer_kind, price_text=price_text, billing_period=period,
                vendor_data={"row": cells},
            )
