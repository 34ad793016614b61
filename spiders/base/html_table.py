"""Plain HTML price tables: the regional-IDC shape, also used for rendered JS market pages.

A table is read by its header texts, so a vendor is configuration, not code:
  start_urls    pages holding the table
  rows          CSS selector of the body rows            (e.g. "table#gpu-price tbody tr")
  header        CSS selector of the header cells          (default: "thead th" of the same table)
  columns       RawOffer field -> header text; a list of headers is joined with spaces
                (e.g. {"gpu_text": ["型号", "规格"], "gpu_count": "卡数", "available": "库存"}).
                "config_text" maps a configuration cell; "price_unit" a unit cell ("元/卡/时")
                that is read together with each price cell.
  prices        billing period -> header text of the column holding that price
                (e.g. {"hour": "按小时", "month": "包月"}); each non-empty cell is one offer.
                A header that says the price is one card's ("单卡价格", "元/卡/时") marks it so;
                a unit in the header ("包月（元/卡/月）") is read with cells that hold a bare number.
  region        region text when the page is one data centre (else map "region_text" in columns)
  offer_kind    default "on_demand"
  range_end, price_per_card   see GpuPriceSpider (also settable in idc_tables.toml)
The GPU count comes from the count column when there is one, else from the card and configuration
cells ("A100 80G ×8", "8卡整机"); normalization quarantines a row whose texts disagree with it.
A struck-through price in a price cell (<del>, <s>, <strike>, line-through) is its original price.
Hook: `parse_row(cells, response)` yields RawOffers for one row (`cells`: header text -> cell text).
Configuration-only sources live in `spiders/vendors/idc_tables.toml` (see spiders/vendors/idc_tables.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, ClassVar

from scrapy.http import Response

from spiders.base.spider import GpuPriceSpider
from spiders.items import RawOffer
from spiders.parsing.counts import GpuCountError, gpu_count_in_text
from spiders.parsing.prices import is_per_card

_UNAVAILABLE = re.compile(r"售罄|无货|缺货|已满|暂无|sold\s*out|unavailable", re.I)
_AVAILABLE = re.compile(r"有货|充足|可租|紧张|in\s*stock|available", re.I)
_IDLE_OF_TOTAL = re.compile(r"(\d+)\s*/\s*\d+")
_HEADER_UNIT = re.compile(r"[(（]([^()（）]+)[)）]")
_BARE_NUMBER = re.compile(r"[0-9][0-9,.\s]*")


def availability(text: str | None) -> bool | None:
    """'售罄' -> False, '有货' -> True, '空闲 3/40' -> True, '0/40' -> False, '' -> None."""
    if not text:
        return None
    if _UNAVAILABLE.search(text):
        return False
    if match := _IDLE_OF_TOTAL.search(text):
        return int(match.group(1)) > 0
    return True if _AVAILABLE.search(text) else None


def cell_text(cell) -> str:
    return " ".join(" ".join(cell.css("::text").getall()).split())


_STRUCK = ("ancestor::del or ancestor::s or ancestor::strike or ancestor::*[contains(@style, "
           "'line-through') or contains(@class, 'line-through')]")


def price_cell_text(cell) -> str:
    """A price cell's text; a struck-through price in it is written as the original price
    ("<del>¥3.20</del> ¥2.10/时" -> "原价 ¥3.20 现价 ¥2.10/时"), so both are kept."""
    struck = " ".join(" ".join(cell.xpath(f".//text()[{_STRUCK}]").getall()).split())
    if not struck:
        return cell_text(cell)
    rest = " ".join(" ".join(cell.xpath(f".//text()[not({_STRUCK})]").getall()).split())
    return f"原价 {struck} 现价 {rest}"


class HtmlTableSpider(GpuPriceSpider):
    fetch_style = "HTML table"
    rows: ClassVar[str]
    header: ClassVar[str | None] = None
    columns: ClassVar[dict[str, str | list[str]]] = {}
    prices: ClassVar[dict[str, str]] = {}
    region: ClassVar[str | None] = None
    offer_kind: ClassVar[str] = "on_demand"

    async def start(self):
        for url in self.start_urls:
            yield self.request(url)

    def parse(self, response: Response) -> Iterable[RawOffer]:
        table_selector = self.rows.split(" tbody")[0].split(" tr")[0]
        header_cells = response.css(self.header or f"{table_selector} thead th")
        headers = [cell_text(c) for c in header_cells]
        missing = [h for h in self._expected_headers() if h not in headers]
        if missing:
            # A changed layout must be loud: name the source and the columns that disappeared.
            raise ValueError(f"{self.name}: table headers {missing} not found on {response.url} "
                             f"(found {headers})")
        price_headers = set(self.prices.values())
        for row in response.css(self.rows):
            cells = dict(zip(headers, (price_cell_text(c) if h in price_headers else cell_text(c)
                                       for h, c in zip(headers, row.css("td"), strict=False)),
                             strict=False))
            if cells:
                yield from self.parse_row(cells, response)

    def _expected_headers(self) -> list[str]:
        expected = list(self.prices.values())
        for header in self.columns.values():
            expected.extend([header] if isinstance(header, str) else header)
        return expected

    def column(self, cells: dict[str, str], field: str) -> str | None:
        header = self.columns.get(field)
        if header is None:
            return None
        names = [header] if isinstance(header, str) else header
        return " ".join(cells.get(n, "") for n in names).strip() or None

    def gpu_count(self, cells: dict[str, str]) -> str | int | None:
        """The count column, else the count written in the card or configuration cells."""
        column = self.column(cells, "gpu_count")
        if column:
            return column
        try:
            return gpu_count_in_text(self.column(cells, "gpu_text"),
                                     self.column(cells, "config_text"))
        except GpuCountError:   # normalization reads the same cells and quarantines with why
            return None

    def parse_row(self, cells: dict[str, str], response: Response) -> Iterable[RawOffer]:
        gpu_text = self.column(cells, "gpu_text")
        region_text = self.column(cells, "region_text") or self.region
        fields: dict[str, Any] = {
            "gpu_text": gpu_text,
            "gpu_count": self.gpu_count(cells),
            "config_text": self.column(cells, "config_text"),
            "vram_gb": self.column(cells, "vram_gb"),
            "region_text": region_text,
            "available": availability(self.column(cells, "available")),
            "offer_kind": self.offer_kind,
            "vendor_data": {"row": cells},
        }
        unit_cell = self.column(cells, "price_unit") or ""
        for period, header in self.prices.items():
            price_text = cells.get(header, "").strip()
            if not price_text:
                continue
            header_unit = " ".join(_HEADER_UNIT.findall(header))
            if _BARE_NUMBER.fullmatch(price_text) and (unit_cell or header_unit):
                price_text = f"{price_text} {unit_cell or header_unit}"   # "6,000 元/卡/月"
            per_card = {"price_per_card": True} if is_per_card(f"{header} {unit_cell}") else {}
            yield self.offer(response, sku=f"{gpu_text} | {fields['gpu_count'] or 1}",
                             price_text=price_text, billing_period=period, **per_card, **fields)
