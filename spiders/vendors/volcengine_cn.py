"""火山引擎 Volcano Engine: the GPU instance price page of its docs, one static table per billing
mode.

The cells hold bare numbers ("27.50", "13,200.00"); the unit is only in the header
("按量计费（元/小时）"). The base reads the header's unit with the cell ("27.50 元/小时"), so the
price text carries its own currency and period and the shared price parser reads it (separators
included); a cell that is not a number ("联系商务") is passed as is, to be quarantined with a
reason.
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import HtmlTableSpider
from spiders.items import RawOffer


class VolcengineCNSpider(HtmlTableSpider):
    name = "volcengine_cn"
    vendor = "火山引擎 Volcano Engine"
    vendor_kind = "hyperscaler"
    start_urls = ["https://www.volcengine.com/docs/6459/72363"]
    # One table per billing mode; tables without a price column (notes, specs) are not ours.
    tables = "article.volc-md-viewer table"
    rows = "tbody tr"
    columns = {"sku": "实例规格", "gpu_text": ["GPU", "显存"], "gpu_count": "GPU数",
               "region_text": "地域"}
    prices = {"hour": "按量计费（元/小时）", "month": "包月（元/月）"}
    not_offered = frozenset({"-", "—"})
    min_offers = 15

    def parse_row(self, cells: dict[str, str], response: Response) -> Iterable[RawOffer]:
        for kind, period, header, price_text in self.price_cells(cells):
            yield self.offer(
                response, sku=self.column(cells, "sku"), gpu_text=self.column(cells, "gpu_text"),
                gpu_count=self.column(cells, "gpu_count"),
                region_text=self.column(cells, "region_text"), offer_kind=kind,
                price_text=price_text, billing_period=period, available=None,
                vendor_data={"row": cells, "table": header})
