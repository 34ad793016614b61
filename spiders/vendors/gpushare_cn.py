"""恒源云 (gpushare.com): the GPU market page, a JavaScript app rendered in Chromium.

The page is a shell until its script has fetched the market JSON; it then shows one card per
machine (not a <table>), each a list of label/value fields: 型号 / 显存 / 地区 / 按时 / 按天 /
包月 / 空闲. Page path and markup are modeled (sources.md #15, unverified).
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import GpuPriceSpider
from spiders.base.html_table import availability, cell_text
from spiders.items import RawOffer

PRICES = {"按时": "hour", "按天": "day", "包月": "month"}
CARD = "div.machine-card"


class GpushareCNSpider(GpuPriceSpider):
    name = "gpushare_cn"
    vendor = "恒源云 GPUSHARE"
    vendor_kind = "marketplace"
    render_js = True
    start_urls = ["https://gpushare.com/market"]
    wait_for = CARD
    min_offers = 20

    async def start(self):
        for url in self.start_urls:
            yield self.request(url)

    def parse(self, response: Response) -> Iterable[RawOffer]:
        cards = response.css(CARD)
        if not cards:  # the unrendered shell, or a changed layout: say so instead of 0 offers
            raise ValueError(f"{self.name}: no machine cards ({CARD}) on {response.url}")
        for card in cards:
            fields = {cell_text(f.css(".label")): cell_text(f.css(".value"))
                      for f in card.css(".field")}
            for label, period in PRICES.items():
                price = fields.get(label, "")
                if price in ("", "—", "-"):  # the machine is not rented on this term
                    continue
                # Prices are per card: an instance takes 1..n cards of the machine at this rate.
                yield self.offer(
                    response, sku=card.attrib.get("data-machine-id") or fields.get("型号"),
                    gpu_text=fields.get("型号"), vram_gb=fields.get("显存"), gpu_count=1,
                    region_text=fields.get("地区"), offer_kind="on_demand", price_text=price,
                    billing_period=period, available=availability(fields.get("空闲")),
                    vendor_data={"card": fields})
