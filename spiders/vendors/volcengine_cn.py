"""火山引擎 Volcano Engine: the GPU instance price page of its docs, one static table per billing mode.

The cells hold bare numbers ("27.50", "13,200.00"); the unit is only in the header
("按量计费（元/小时）"). The spider appends the header's unit to the cell ("27.50 元/小时") so the
price text carries its own currency and period and the shared price parser reads it (separators
included); a cell that is not a number ("联系商务") is passed as is, to be quarantined with a reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import HtmlTableSpider
from spiders.base.html_table import cell_text
from spiders.items import RawOffer

_UNIT_RE = re.compile(r"[（(]([^）)]+)[）)]")   # "包月（元/月）" -> "元/月"


class VolcengineCNSpider(HtmlTableSpider):
    name = "volcengine_cn"
    vendor = "火山引擎 Volcano Engine"
    vendor_kind = "hyperscaler"
    start_urls = ["https://www.volcengine.com/docs/6459/72363"]
    tables = "article.volc-md-viewer table"
    columns = {"sku": "实例规格", "gpu_text": ["GPU", "显存"], "gpu_count": "GPU数",
               "region_text": "地域"}
    prices = {"hour": "按量计费（元/小时）", "month": "包月（元/月）"}
    min_offers = 15

    def parse(self, response: Response) -> Iterable[RawOffer]:
        # One table per billing mode; tables without a price column (notes, specs) are not ours.
        found: list[str] = []
        for table in response.css(self.tables):
            headers = [cell_text(c) for c in table.css("thead th")]
            billing = [(period, h) for period, h in self.prices.items() if h in headers]
            if not billing:
                continue
            missing = [h for h in self._expected_headers()
                       if h not in headers and h not in self.prices.values()]
            if missing:
                raise ValueError(f"{self.name}: table headers {missing} not found on "
                                 f"{response.url} (found {headers})")
            found += [h for _, h in billing]
            for row in table.css("tbody tr"):
                cells = dict(zip(headers, (cell_text(c) for c in row.css("td")), strict=False))
                for period, header in billing:
                    yield from self.price_offer(cells, period, header, response)
        if absent := [h for h in self.prices.values() if h not in found]:
            raise ValueError(f"{self.name}: table headers {absent} not found on {response.url}")

    def price_offer(self, cells: dict[str, str], period: str, header: str,
                    response: Response) -> Iterable[RawOffer]:
        cell = cells.get(header, "").strip()
        if not cell or cell in ("-", "—"):
            return
        unit = _UNIT_RE.search(header).group(1)
        price_text = f"{cell} {unit}" if cell[0].isdigit() else cell
        yield self.offer(
            response, sku=self.column(cells, "sku"), gpu_text=self.column(cells, "gpu_text"),
            gpu_count=self.column(cells, "gpu_count"),
            region_text=self.column(cells, "region_text"),
            offer_kind="on_demand", price_text=price_text, billing_period=period, available=None,
            vendor_data={"row": cells, "table": header},
        )
