"""恒源云 (gpushare.com): the GPU market page, a JavaScript app rendered in Chromium.

The page is a shell until its script has fetched the market JSON; it then shows one card per
machine (not a <table>), each a list of label/value fields: 型号 / 显存 / 地区 / 按时 / 按天 /
包月 / 空闲, read by HtmlTableSpider as a table whose header texts are the labels
(`card_fields`). Page path and markup are modeled (sources.md #15, unverified).
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import HtmlTableSpider
from spiders.base.html_table import availability
from spiders.items import RawOffer


class GpushareCNSpider(HtmlTableSpider):
    name = "gpushare_cn"
    vendor = "恒源云 GPUSHARE"
    vendor_kind = "marketplace"
    render_js = True
    start_urls = ["https://gpushare.com/market"]
    rows = "div.machine-card"
    wait_for = rows
    card_fields = (".field", ".label", ".value")
    extra_cells = {"machine_id": "@data-machine-id"}
    columns = {"gpu_text": "型号", "vram_gb": "显存", "region_text": "地区", "available": "空闲"}
    prices = {"hour": "按时", "day": "按天", "month": "包月"}
    not_offered = frozenset({"—", "-"})   # the machine is not rented on this term
    min_offers = 20

    def parse_row(self, cells: dict[str, str], response: Response) -> Iterable[RawOffer]:
        card = {label: text for label, text in cells.items() if label != "machine_id"}
        for kind, period, _, price_text in self.price_cells(cells):
            # Prices are per card: an instance takes 1..n cards of the machine at this rate.
            yield self.offer(
                response, sku=cells["machine_id"] or card.get("型号"), gpu_text=card.get("型号"),
                vram_gb=card.get("显存"), gpu_count=1, region_text=card.get("地区"),
                offer_kind=kind, price_text=price_text, billing_period=period,
                available=availability(card.get("空闲")), vendor_data={"card": card})
