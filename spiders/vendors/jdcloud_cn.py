"""京东云 JD Cloud: the GPU rows of the Virtual Machines price overview (价格总览) of its docs.

Reads https://docs.jdcloud.com/en/virtual-machines/price-overview, the page built from JD Cloud's
documentation repository (jdcloudcom/en `documentation/Elastic-Compute/Virtual-Machines/Pricing/
Price-Overview.md`; the page links its siblings as https://docs.jdcloud.com/en/<product>/<page>).
Its one `<table>` has a two-row header: "Instance Type | Type (CPU, Memory) | Monthly Price (RMB) |
Price by Configuration (RMB/hour) | Remarks", the price columns split by region group
("cn-north-1<br>cn-east-2<br>cn-south-1" and "cn-east-1"). A row starts with its family and
sub-family cells when they open a rowspan ("GPU", "Standard"), so the last eight cells of every
row are its type, CPU, memory, two monthly prices, two hourly prices and remarks; the remarks'
first line is the row's cards ("1*P40"). Each GPU row gives one offer per region of a group and
per term (a whole instance's price; normalization divides by the cards). Rows of other families
are counted in `jdcloud_cn/cpu_types_skipped`.

Prices are the official list prices ("the unified official price excluding the user's
discounts"); the page states no date. The JD Cloud price calculator and the signed price APIs
are not read.
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base import GpuPriceSpider
from spiders.base.html_table import cell_text, header_unit, with_unit
from spiders.items import RawOffer

PRICE_URL = "https://docs.jdcloud.com/en/virtual-machines/price-overview"
GPU_FAMILY = "GPU"
# the header's price groups, left to right (the second header row's region cells pair with them)
PRICE_GROUPS = (("month", "Monthly Price"), ("hour", "Price by Configuration"))
ROW_CELLS = 8     # type, CPU, memory, 2 monthly prices, 2 hourly prices, remarks


class JdcloudCnSpider(GpuPriceSpider):
    name = "jdcloud_cn"
    vendor = "京东云 JD Cloud"
    vendor_kind = "hyperscaler"
    start_urls = [PRICE_URL]
    fetch_style = "HTML table"
    public_path = ("the GPU rows of the Virtual Machines price overview in JD Cloud's docs "
                   "(list prices per region group; no keys)")
    min_offers = 40

    def parse(self, response: Response) -> Iterable[RawOffer]:
        table = response.css("table")
        rows = table.css("tr")
        if len(rows) < 3:
            raise ValueError(f"{self.name}: no price table on {response.url}")
        headers = [cell_text(c) for c in rows[0].css("td, th")]
        units = {period: self._group_unit(headers, label, response)
                 for period, label in PRICE_GROUPS}
        second = rows[1].css("td, th")
        machine_units = [header_unit(cell_text(c)) for c in second[:2]]   # CPU (Core), Memory (GB)
        groups = [c.css("::text").getall() for c in second][2:]
        if len(groups) != 4:
            raise ValueError(f"{self.name}: expected two region groups per price column on "
                             f"{response.url}, found {groups}")
        regions = [[r.strip() for r in group if r.strip()] for group in groups[:2]]
        family = None
        for row in rows[2:]:
            cells = row.css("td, th")
            lead = len(cells) - ROW_CELLS
            if lead not in (0, 1, 2):
                raise ValueError(f"{self.name}: a row of {len(cells)} cells on {response.url}")
            if lead == 2:
                family = cell_text(cells[0])
            texts = [cell_text(c) for c in cells[lead:]]
            if family != GPU_FAMILY:
                self.crawler.stats.inc_value("jdcloud_cn/cpu_types_skipped")
                continue
            cards = next(iter(cells[-1].css("::text").getall()), "").strip()
            yield from self._row_offers(response, texts, cards, regions, units, machine_units)

    def _group_unit(self, headers: list[str], label: str, response: Response) -> str:
        header = next((h for h in headers if h.startswith(label)), None)
        if header is None:
            raise ValueError(f"{self.name}: no {label!r} header on {response.url} "
                             f"(found {headers})")
        return header_unit(header)

    def _row_offers(self, response: Response, texts: list[str], cards: str,
                    regions: list[list[str]], units: dict[str, str],
                    machine_units: list[str]) -> Iterable[RawOffer]:
        sku, cpu, memory, month_a, month_b, hour_a, hour_b, remarks = texts
        vcpus_text, memory_text = (with_unit(t, u) for t, u in zip((cpu, memory), machine_units,
                                                                     strict=True))
        prices = {"month": (month_a, month_b), "hour": (hour_a, hour_b)}
        for period, by_group in prices.items():
            for group, price in zip(regions, by_group, strict=True):
                if not price or price == "--":    # not sold in that group
                    continue
                for region in group:
                    yield self.offer(
                        response, sku=sku, gpu_text=cards, config_text=sku,
                        region_text=region, offer_kind="on_demand", billing_period=period,
                        price_text=with_unit(price, units[period]), currency="CNY",
                        vcpus_text=vcpus_text, memory_text=memory_text, available=None,
                        vendor_data={"remarks": remarks, "region_group": group})
