"""优云智算 Compshare (UCloud): the price table of its docs and its dated price announcements.

Reads, from the official docs at https://www.compshare.cn/docs/<path> (a Nextra site; its pages
are in BennielAllan/compshare-docs, an import of the docs made 2026-05-13):
  operation/charge/bill      计费概览: `| 型号 | 显存 | 按量 | 包日 | 包月 |`, bare numbers
                             under "下表展示为单卡实例的原价费用（单位：元）": one card's list
                             price, read as a configured table would be (html_table.py)
  overview/specialevent/event0, event1, event3
                             announcements with a date ("活动时间：2025年11月11日开始") and a table
                             `| GPU型号 | 原价 | 现价 | 白银会员 | 黄金会员 | 钻石会员 |` (event0:
                             `| GPU型号 | 日常单价 | 青铜会员 | 白银会员 | 钻石会员 |`). The list
                             price (现价, or 日常单价) is the offer, dated by the page: it carries
                             `effective_at`, so it lands on that date, not the crawl's. The member
                             prices and the previous list price (原价) stay in vendor_data as the
                             page writes them; they are not offers.
The table does not split prices by region: every offer is placed in 华北二 (cn-wlcb, Ulanqab),
where real-account bills (guli20001221/compshare-agent) match the list prices less the member
discount; 上海 (cn-sh2) is not emitted. The signed price API (GetCompShareInstancePrice, base URL
https://api.compshare.cn) is not read: UCloud's SDK (ucloud-sdk-python3) is not installed here,
and a signed API goes through the vendor's SDK or not at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import HtmlTableSpider
from spiders.base.html_table import cell_text
from spiders.items import RawOffer

DOCS = "https://www.compshare.cn/docs"
BILL_URL = f"{DOCS}/operation/charge/bill"
ANNOUNCEMENT_URLS = tuple(f"{DOCS}/overview/specialevent/event{n}" for n in (0, 1, 3))

# An announcement names a card as "4090" or "3080Ti"; the price table as 型号 + 显存. The same
# card gets the table's spelling, so its dated prices and the table's are one offer's history
# (显存 of each 型号 from bill.md; the announcements' "4090" is the 24 GB card: event0 lists it
# beside "4090-48G", and event3's 原价 2.08 is event0's 4090 日常单价).
TABLE_CARD = {"4090": "4090-24G 24G", "4090-48G": "4090-48G 48G", "5090": "5090 32G",
              "3090": "3090 24G", "3080Ti": "3080ti 12G", "2080": "2080 8G",
              "2080Ti": "2080ti 11G", "A800": "A800 80G", "A100": "A100 80G", "H20": "H20 96G",
              "P40": "P40 24G", "V100S": "v100s 32G"}
_DATE = re.compile(r"活动时间\s*[:：]\s*(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")
LIST_PRICE_HEADERS = ("现价", "日常单价")   # the announcement's list price column


def announced_date(text: str) -> str | None:
    """The date an announcement's prices apply from, as ISO: "活动时间：2025年11月11日开始" ->
    "2025-11-11"; None when the page states none."""
    match = _DATE.search(text)
    if not match:
        return None
    year, month, day = (int(g) for g in match.groups())
    return f"{year:04d}-{month:02d}-{day:02d}"


class CompshareCnSpider(HtmlTableSpider):
    name = "compshare_cn"
    vendor = "优云智算 Compshare (UCloud)"
    vendor_kind = "gpu_cloud"
    start_urls = [BILL_URL, *ANNOUNCEMENT_URLS]
    public_path = ("the docs' 计费概览 price table and three dated price announcements "
                   "(no keys; the signed GetCompShareInstancePrice API is not read)")
    tables = "table"
    rows = "tbody tr"
    columns = {"gpu_text": ["型号", "显存"]}
    prices = {"hour": "按量", "day": "包日", "month": "包月"}
    page_unit = "元"
    price_per_card = True
    region = "华北二"
    min_offers = 40

    def parse(self, response: Response) -> Iterable[RawOffer]:
        if response.url in ANNOUNCEMENT_URLS:
            yield from self.parse_announcement(response)
        else:
            yield from super().parse(response)

    def parse_announcement(self, response: Response) -> Iterable[RawOffer]:
        page_text = " ".join(" ".join(response.css("body ::text").getall()).split())
        effective = announced_date(page_text)
        if effective is None:   # an undated price must not pass as a dated one
            raise ValueError(f"{self.name}: no 活动时间 date on {response.url}")
        title = cell_text(response.css("h1")) or None
        found = False
        for table in response.css("table"):
            headers = [cell_text(c) for c in table.css("thead th")]
            price_header = next((h for h in LIST_PRICE_HEADERS if h in headers), None)
            if "GPU型号" not in headers or price_header is None:
                continue
            found = True
            for row in table.css("tbody tr"):
                cells = dict(zip(headers, (cell_text(c) for c in row.css("td")), strict=False))
                if cells.get("GPU型号") and cells.get(price_header):
                    yield self._announced_offer(response, cells, price_header, effective, title)
        if not found:
            raise ValueError(f"{self.name}: no GPU型号 / 现价 table on {response.url}")

    def _announced_offer(self, response: Response, cells: dict[str, str], price_header: str,
                         effective: str, title: str | None) -> RawOffer:
        card = cells["GPU型号"]
        gpu_text = TABLE_CARD.get(card, card)
        members = {h: v for h, v in cells.items() if h.endswith("会员")}
        return self.offer(
            response, sku=f"{gpu_text} | 1", gpu_text=gpu_text, gpu_count=1,
            region_text=self.region, offer_kind=self.offer_kind, billing_period="hour",
            price_text=cells[price_header], effective_at=effective,
            vendor_data={"row": cells, "announcement": title, "announced_card": card,
                         "list_price_column": price_header, "member_prices": members,
                         "previous_list_price": cells.get("原价")})
