"""矩池云 Matpool (matpool.com): the static GPU price list, one table row per card, region and
billing term (plain HTTP, no JavaScript needed; page path unverified, sources.md #16).

The price cell holds amount and unit together ("¥2.39/时", "¥1,399/月"); a promotion shows the
struck-through list price next to the current one ("原价¥2.29 现价¥1.89", no unit: the term comes
from the 计费方式 column), and a sold-out term shows "售罄" instead of a price.

Machine specs: disk_text only, from the page's note that every price includes a system disk
("价格为单卡价格，含系统盘 50GB"); the page states no vCPUs or RAM.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import HtmlTableSpider
from spiders.base.html_table import availability
from spiders.items import RawOffer

# "含系统盘 50GB" in the note above the table: the disk every (one-card) price includes
INCLUDED_DISK_RE = re.compile(r"含\s*(系统盘\s*[0-9]+(?:\.[0-9]+)?\s*[GT]i?B?)")
PERIODS = {"按时": "hour", "按小时": "hour", "按天": "day", "按周": "week", "包月": "month"}


class MatpoolCNSpider(HtmlTableSpider):
    name = "matpool_cn"
    vendor = "矩池云 Matpool"
    vendor_kind = "gpu_cloud"
    start_urls = ["https://matpool.com/host-market/gpu"]
    rows = "table.price-table tbody tr"
    columns = {"region_text": "地区", "gpu_text": "GPU型号", "vram_gb": "显存",
               "billing_period": "计费方式", "price_text": "价格", "available": "库存"}
    min_offers = 15

    def parse_row(self, cells: dict[str, str], response: Response) -> Iterable[RawOffer]:
        gpu_text, vram = self.column(cells, "gpu_text"), self.column(cells, "vram_gb")
        term = self.column(cells, "billing_period")
        # "售罄" rows are kept: normalization quarantines them as "sold out" (seen, not priced).
        yield self.offer(
            response, sku=f"{gpu_text} {vram}", gpu_text=gpu_text, vram_gb=vram,
            gpu_count=1,  # the page says prices are per card (单卡价格)
            region_text=self.column(cells, "region_text"), offer_kind="on_demand",
            price_text=self.column(cells, "price_text"),
            billing_period=PERIODS.get(term or ""),  # unknown term: None, quarantined loudly
            available=availability(self.column(cells, "available")),
            disk_text=included_disk(response), vendor_data={"row": cells},
        )


def included_disk(response: Response) -> str | None:
    """The system disk the page says every price includes ("系统盘 50GB"), or None."""
    notes = " ".join(response.xpath("//p[not(ancestor::table)]//text()").getall())
    match = INCLUDED_DISK_RE.search(notes)
    return match[1] if match else None
