"""HTML price tables: the regional-IDC shape, also used for rendered JS market pages.

A table is read by its header texts, so a vendor is configuration, not code:
  start_urls    pages holding the table
  rows          CSS selector of the body rows            (e.g. "table#gpu-price tbody tr")
  header        CSS selector of the header cells          (default: "thead th" of the same table)
  tables        CSS selector of each table when a page holds several (one per GPU model, one per
                billing mode); `rows` and `header` (default "thead th") are then read inside each.
                A table without any price column (notes, specs) is skipped; the others must hold
                every column, and each price column must be in one of them.
  card_fields   for a page of cards instead of a table (`rows` selects the cards): the CSS
                selectors (field, label, value) of one labelled field of a card, e.g.
                (".field", ".label", ".value"); the labels stand for the header texts.
  extra_cells   cell name -> XPath from a row to a text of that row outside its cells (an
                attribute of the row, the heading of its table's section), read as one more cell
                (e.g. {"GPU": "ancestor::section[1]//h3"}); it can be mapped in `columns`.
  columns       RawOffer field -> header text; a list of headers is joined with spaces
                (e.g. {"gpu_text": ["型号", "规格"], "gpu_count": "卡数", "available": "库存"}).
                "config_text" maps a configuration cell; "price_unit" a unit cell ("元/卡/时")
                that is read together with each price cell. The machine's "vcpus_text",
                "memory_text" and "disk_text" map their columns ({"memory_text": "内存"}); a
                bare number is read with the unit in its header ("内存(GB)": "512" -> "512 GB").
                "sku_text" maps the vendor's own row id ("费用名称": "GPU510"), added to the sku
                (rows that share a card and count stay apart).
                "vram_gb" maps a memory column (显存), a bare number read with its header's unit
                ("显存(MiB)": "40960" -> 40 GB): on a slice row (1/2, 半卡, MIG 3g.40gb,
                vGPU) it is the slice's memory, on any other row the card's; a figure that fits
                neither is quarantined (spiders/parsing/gpu_models.py). Map it there, not into
                gpu_text, where its place among the card's words would decide its reading.
  prices        billing period -> header text of the column holding that price
                (e.g. {"hour": "按小时", "month": "包月"}); each non-empty cell is one offer.
                A header that says the price is one card's ("单卡价格", "元/卡/时") marks it so;
                a unit in the header ("包月（元/卡/月）") is read with the cells that hold a
                bare number.
  spot_prices   the same for spot (preemptible) price columns ({"hour": "抢占式"})
  page_unit     the unit the page states once for every bare-number price ("单位：元" above the
                table): read before the header's or unit cell's unit ("1.66" -> "1.66 元";
                "4.00" + unit cell "卡小时" -> "4.00 元 卡小时")
  keep_rows     header text -> regular expression: only rows whose cell under that header matches
                are read ({"费用名称": "GPU"} keeps a fee table's GPU rows, not its CPU or
                storage rows); by default every row is.
  not_offered   cell texts that say a term is not sold ("-", "—"): no offer. By default such a
                cell goes on as written, and normalization quarantines it as "no price given".
  region        region text when the page is one data centre (else map "region_text" in columns)
  partition     the partition (queue) the page's prices are for when no cell names it (a fee table
                with one GPU column): read as the row's card text, for `cards` to map
  cards         card text as read (a partition, queue or node type) -> {card, evidence}: the card
                public evidence names for it, and that evidence (URL or repository/file/commit,
                what it shows); an entry with no card says what was searched, and its rows are
                quarantined as naming no card. `gpu_count` in an entry: the machine's card count
                the evidence states (for a price per machine). A text naming several cards at one
                price ("A100、A800") yields one offer per card (gpu_models.card_alternatives).
  offer_kind    default "on_demand"
  range_end, price_per_card   see GpuPriceSpider
The GPU count is the count column when there is one; normalization reads the count the card and
configuration cells write ("A100 80G ×8", "8卡整机") and quarantines a row whose column and texts
disagree. The sku names a row by its card text and count (`sku_count`), an identity only.
A struck-through price in a price cell (<del>, <s>, <strike>, line-through) is its original price.
A cell merged over several rows or columns (rowspan, colspan: fee tables that write a unit or a
name once for a group of rows) is read in every row and column it covers.
Hooks:
  parse_row(cells, response)  RawOffers for one row (`cells`: header text -> cell text); override
                it for what configuration cannot say (a card text built from two cells, a
                vendor's own sku or skip rule)
  price_cells(cells)  for such an override: (offer kind, billing period, header, price text) of
                each price of the row, read as the default reads them
Configuration-only sources set these attributes in `spiders/vendors/idc_tables.toml` (read by
spiders/vendors/idc_tables.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from scrapy.http import Response

from spiders.base.spider import GpuPriceSpider
from spiders.items import RawOffer
from spiders.parsing.gpu_models import card_alternatives, memory_unit
from spiders.parsing.prices import displayed_text, is_per_card
from spiders.parsing.row_ids import sku_count

_UNAVAILABLE = re.compile(r"售罄|无货|缺货|已满|暂无|sold\s*out|unavailable", re.I)
_AVAILABLE = re.compile(r"有货|充足|可租|紧张|in\s*stock|available", re.I)
_IDLE_OF_TOTAL = re.compile(r"(\d+)\s*/\s*\d+")
_HEADER_UNIT = re.compile(r"[(（]([^()（）]+)[)）]")
_BARE_NUMBER = re.compile(r"[0-9][0-9,.\s]*")


def with_unit(text: str, unit: str) -> str:
    """A bare number cell read with the unit its header or unit cell gives ("6,000" + "元/卡/月"
    -> "6,000 元/卡/月"); any other text, or no unit, as it is."""
    return f"{text} {unit}" if unit and _BARE_NUMBER.fullmatch(text) else text


def header_unit(header: str) -> str:
    """The unit a header writes in parentheses: "内存(GB)" -> "GB", "包月（元/卡/月）" ->
    "元/卡/月"."""
    return " ".join(_HEADER_UNIT.findall(header))


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
    """A price cell's text as a browser shows it ("¥<em>12</em>.5/<small>时</small>" ->
    "¥12.5/时": inline markup joins, blocks and <br> separate); a struck-through price in it is
    written as the original price ("<del>¥3.20</del> ¥2.10/时" -> "原价 ¥3.20 现价 ¥2.10/时"),
    so both are kept."""
    struck = " ".join(" ".join(cell.xpath(f".//text()[{_STRUCK}]").getall()).split())
    if not struck:
        # plain text is kept byte for byte (a hostile cell's escapes stay visible in its
        # quarantine reason); only markup is rendered
        return (" ".join(displayed_text(cell.get()).split()) if cell.xpath("./*")
                else cell_text(cell))
    rest = " ".join(" ".join(cell.xpath(f".//text()[not({_STRUCK})]").getall()).split())
    return f"原价 {struck} 现价 {rest}"


def _span(cell, attribute: str) -> int:
    """A cell's rowspan / colspan: 1 when absent or not a small positive number."""
    value = (cell.attrib.get(attribute) or "1").strip()
    return int(value) if value.isdigit() and 0 < int(value) <= 1000 else 1


class HtmlTableSpider(GpuPriceSpider):
    fetch_style = "HTML table"
    rows: ClassVar[str]
    header: ClassVar[str | None] = None
    tables: ClassVar[str | None] = None
    card_fields: ClassVar[tuple[str, str, str] | None] = None
    extra_cells: ClassVar[dict[str, str]] = {}
    columns: ClassVar[dict[str, str | list[str]]] = {}
    prices: ClassVar[dict[str, str]] = {}
    spot_prices: ClassVar[dict[str, str]] = {}
    not_offered: ClassVar[frozenset[str]] = frozenset()
    keep_rows: ClassVar[dict[str, str]] = {}
    region: ClassVar[str | None] = None
    partition: ClassVar[str | None] = None
    cards: ClassVar[dict[str, dict[str, Any]]] = {}
    offer_kind: ClassVar[str] = "on_demand"
    page_unit: ClassVar[str | None] = None

    def parse(self, response: Response) -> Iterable[RawOffer]:
        if self.card_fields:
            rows = self._card_rows(response)
        elif self.tables:
            rows = self._rows_of_tables(response)
        else:
            rows = self._table_rows(response)
        keep = {header: re.compile(pattern) for header, pattern in self.keep_rows.items()}
        for cells in rows:
            if cells and all(p.search(cells.get(h, "")) for h, p in keep.items()):
                yield from self.parse_row(cells, response)

    def _table_rows(self, response: Response) -> Iterator[dict[str, str]]:
        table_selector = self.rows.split(" tbody")[0].split(" tr")[0]
        headers = [cell_text(c) for c in response.css(self.header or f"{table_selector} thead th")]
        self._check_headers(headers, self._expected_headers(), response)
        yield from self._spanned_rows(response.css(self.rows), headers)

    def _rows_of_tables(self, response: Response) -> Iterator[dict[str, str]]:
        tables = response.css(self.tables)
        if not tables:
            raise ValueError(f"{self.name}: no GPU price tables ({self.tables}) on {response.url}")
        price_headers = self._price_headers()
        found: set[str] = set()
        for table in tables:
            headers = [cell_text(c) for c in table.css(self.header or "thead th")]
            if not price_headers & set(headers):
                continue   # not a price table
            found |= price_headers & set(headers)
            self._check_headers(headers, [h for h in self._expected_headers()
                                          if h not in price_headers], response)
            yield from self._spanned_rows(table.css(self.rows), headers)
        if absent := [h for h in self._expected_headers() if h in price_headers - found]:
            raise ValueError(f"{self.name}: table headers {absent} not found on {response.url}")

    def _card_rows(self, response: Response) -> Iterator[dict[str, str]]:
        field, label, value = self.card_fields
        cards = response.css(self.rows)
        if not cards:   # the unrendered shell, or a changed layout: say so instead of 0 offers
            raise ValueError(f"{self.name}: no machine cards ({self.rows}) on {response.url}")
        price_headers = self._price_headers()
        rows = []
        for card in cards:
            cells = {}
            for f in card.css(field):
                name = cell_text(f.css(label))
                cells[name] = (price_cell_text if name in price_headers else cell_text)(
                    f.css(value))
            rows.append({**cells, **self._extra_cells(card)})
        labels = list(dict.fromkeys(name for cells in rows for name in cells))
        self._check_headers(labels, self._expected_headers(), response)
        yield from rows

    def _spanned_rows(self, rows, headers: list[str]) -> Iterator[dict[str, str]]:
        """header text -> cell text of each row; a cell with rowspan / colspan fills every row and
        column it covers, so the cells after it stay under their own headers."""
        price_headers = self._price_headers()
        carried: dict[int, tuple[int, str]] = {}   # column -> (rows still covered, text)
        for row in rows:
            tds = row.css("td")
            if not tds or (len(tds) == 1 and _span(tds[0], "colspan") >= len(headers) > 1):
                yield {}   # a header row written in the body, or a note across the whole table
                continue
            cells_left = iter(tds)
            texts: dict[int, str] = {}
            column = 0
            while column < len(headers):
                if column in carried:
                    left, text = carried.pop(column)
                    texts[column] = text
                    if left > 1:
                        carried[column] = (left - 1, text)
                    column += 1
                    continue
                td = next(cells_left, None)
                if td is None:
                    column += 1
                    continue
                text = (price_cell_text if headers[column] in price_headers else cell_text)(td)
                down, across = _span(td, "rowspan"), _span(td, "colspan")
                for col in range(column, min(column + across, len(headers))):
                    texts[col] = text
                    if down > 1:
                        carried[col] = (down - 1, text)
                column += across
            cells = {headers[c]: t for c, t in sorted(texts.items())}
            yield {**cells, **self._extra_cells(row)} if cells else cells

    def _extra_cells(self, row) -> dict[str, str]:
        return {name: " ".join(row.xpath(f"string({xpath})").get().split())
                for name, xpath in self.extra_cells.items()}

    def _check_headers(self, headers: list[str], expected: list[str], response: Response) -> None:
        if missing := [h for h in expected if h not in headers]:
            # A changed layout must be loud: name the source and the columns that disappeared.
            raise ValueError(f"{self.name}: table headers {missing} not found on {response.url} "
                             f"(found {headers})")

    def _price_headers(self) -> set[str]:
        return {*self.prices.values(), *self.spot_prices.values()}

    def _expected_headers(self) -> list[str]:
        expected = [*self.prices.values(), *self.spot_prices.values()]
        for header in self.columns.values():
            expected.extend([header] if isinstance(header, str) else header)
        return [h for h in expected if h not in self.extra_cells]

    def column(self, cells: dict[str, str], field: str) -> str | None:
        header = self.columns.get(field)
        if header is None:
            return None
        names = [header] if isinstance(header, str) else header
        return " ".join(cells.get(n, "") for n in names).strip() or None

    def gpu_count(self, cells: dict[str, str]) -> str | None:
        """The count column as written; None without one (normalization reads the count the
        card or configuration cells write, once, and checks it against this column)."""
        return self.column(cells, "gpu_count")

    def sku_count(self, cells: dict[str, str]) -> str | int:
        """The count that names the row in its sku (spiders/parsing/row_ids.py): an identity
        only; the offer's gpu_count is never taken from it."""
        return sku_count(self.column(cells, "gpu_count"), self.column(cells, "gpu_text"),
                         self.column(cells, "config_text"))

    def price_cells(self, cells: dict[str, str]) -> Iterator[tuple[str, str, str, str]]:
        """(offer kind, billing period, header, price text) of each price the row lists; a bare
        number is read with the unit of its unit cell or header ("6,000" -> "6,000 元/卡/月")."""
        unit_cell = self.column(cells, "price_unit") or ""
        for kind, columns in ((self.offer_kind, self.prices), ("spot", self.spot_prices)):
            for period, header in columns.items():
                price_text = cells.get(header, "").strip()
                if not price_text or price_text in self.not_offered:
                    continue
                unit = " ".join(u for u in (self.page_unit, unit_cell or header_unit(header)) if u)
                yield kind, period, header, with_unit(price_text, unit)

    def vram_cell(self, cells: dict[str, str]) -> str | None:
        """The memory column, a bare number with the memory unit of its header ("显存(MiB)":
        "40960" -> "40960 MIB"); a header naming no memory unit ("显存（单卡）") adds none."""
        text, header = self.column(cells, "vram_gb"), self.columns.get("vram_gb")
        return with_unit(text, memory_unit(header)) if text and isinstance(header, str) else text

    def machine_cells(self, cells: dict[str, str]) -> dict[str, str | None]:
        """vcpus_text, memory_text and disk_text of a row, a bare number with its header's unit."""
        machine = {}
        for field in ("vcpus_text", "memory_text", "disk_text"):
            text, header = self.column(cells, field), self.columns.get(field)
            machine[field] = with_unit(text, header_unit(header)) \
                if text and isinstance(header, str) else text
        return machine

    def row_cards(self, row_text: str | None) -> list[tuple[str | None, dict[str, Any]]]:
        """(card text, fields) of each offer a row's card text stands for: the card `cards` maps
        it to (with the partition and its evidence), the configuration's reason when it maps it
        to none, one per card of a list at one price, else the text as it is."""
        mapping = self.cards.get(row_text or "")
        if mapping is None:
            alternatives = card_alternatives(row_text or "")
            return [(card, {}) for card in alternatives] or [(row_text, {})]
        if not mapping.get("card"):
            return [(row_text, {"no_card_reason": f"{row_text!r} (a partition, queue or class "
                                                  "of cards) names no card; no public evidence "
                                                  "maps it to one"})]
        count = {"gpu_count": mapping["gpu_count"]} if mapping.get("gpu_count") else {}
        return [(mapping["card"], {"partition": row_text, "card_evidence": mapping["evidence"],
                                   **count})]

    def parse_row(self, cells: dict[str, str], response: Response) -> Iterable[RawOffer]:
        row_text = self.column(cells, "gpu_text") or self.partition
        cards = self.row_cards(row_text)
        for card_text, mapped in cards:
            several = f" | {card_text}" if len(cards) > 1 else ""
            yield from self._row_offers(cells, response, row_text, card_text, mapped, several)

    def _row_offers(self, cells: dict[str, str], response: Response, row_text: str | None,
                    gpu_text: str | None, mapped: dict[str, Any],
                    several: str) -> Iterable[RawOffer]:
        region_text = self.column(cells, "region_text") or self.region
        fields: dict[str, Any] = {
            "gpu_text": gpu_text,
            "gpu_count": mapped.get("gpu_count") or self.gpu_count(cells),
            "config_text": self.column(cells, "config_text"),
            "vram_gb": self.vram_cell(cells),
            "region_text": region_text,
            "available": availability(self.column(cells, "available")),
            **self.machine_cells(cells),
            "vendor_data": {"row": cells, **{k: v for k, v in mapped.items()
                                             if k in ("partition", "card_evidence")}},
        }
        if mapped.get("no_card_reason"):
            fields["no_card_reason"] = mapped["no_card_reason"]
        unit_cell = self.column(cells, "price_unit") or ""
        for kind, period, header, price_text in self.price_cells(cells):
            per_card = {"price_per_card": True} if is_per_card(f"{header} {unit_cell}") else {}
            row_id = self.column(cells, "sku_text")
            sku = (f"{row_text} | {mapped.get('gpu_count') or self.sku_count(cells)}"
                   + (f" | {row_id}" if row_id else "") + several)
            yield self.offer(response, sku=sku,
                             price_text=price_text, billing_period=period, offer_kind=kind,
                             **per_card, **fields)
