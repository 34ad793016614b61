"""Hyperstack: the public GPU pricing page (no key), its "On-Demand GPU Pricing" and "Spot VM
Pricing" cards, one GPU's hourly price per row.

Where the knowledge comes from: a public client at a commit, with the page it recorded:
ewyluda/gpu-price-index `src/gpu_index/sources/hyperstack.py` and `tests/fixtures/hyperstack.html`
@ eb72cc64 (a HubSpot page: each price card is a `.page-price_card` whose `h3` names it, its
`.page-price_card_head_item` cells name the columns, its rows are `.page-price_card_row_item` with
one `.page-price_card_row_item_col` per column; the price is the last column, "$3.99"). Rows are
read by their column headers ("GPU Model", "VRAM (GB)", "Max pCPUs per GPU", "Max RAM (GB) per
GPU", the price column), so a reordered card still reads (the most pCPUs and RAM a GPU comes
with are maxima, not the offer's machine: kept in vendor_data); the Reservation, CPU, storage and AI
Studio cards are not read (their prices are not GPU-hours on demand), and counted.

The page names no region. Where each card is offered is read from the regions SkyPilot's
Hyperstack catalog (built from Hyperstack's keyed flavor API) lists for it
(skypilot-org/skypilot-catalog catalogs/v8/hyperstack/vms.csv @ fdc9d908): one offer per such
region at the page's price. A card no public client places (A100 SXM, H200, B200, B300) carries
no place and is quarantined for it by normalization, with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response

from spiders.base.spider import GpuPriceSpider
from spiders.items import RawOffer
from spiders.parsing.regions import NO_LOCATION

PAGE_URL = "https://www.hyperstack.cloud/gpu-pricing"
# the card's heading -> the offer kind of its rows
CARDS = {"On-Demand GPU Pricing": "on_demand", "Spot VM Pricing": "spot"}
MODEL, VRAM = "GPU Model", "VRAM (GB)"
# the page's model -> the regions SkyPilot's catalog lists its flavors in (@ fdc9d908):
# n3-H100-SXM5x8 in CANADA-1 and US-1; n3-H100x1..x8 (H100-80G-PCIe) and n3-H100x8-NVLink,
# n3-A100x1..x8 (A100-80G-PCIe) and n3-A100x8-NVLink in CANADA-1
REGIONS = {"NVIDIA H100 SXM": ("CANADA-1", "US-1"), "NVIDIA H100 NVLink": ("CANADA-1",),
           "NVIDIA H100": ("CANADA-1",), "NVIDIA H100 PCIe": ("CANADA-1",),
           "NVIDIA A100 NVLink": ("CANADA-1",), "NVIDIA A100": ("CANADA-1",)}


def text(node) -> str:
    """A cell's text with the page's non-breaking and doubled spaces made plain."""
    return " ".join(" ".join(node.css("::text").getall()).split())


class HyperstackSpider(GpuPriceSpider):
    name = "hyperstack"
    vendor = "Hyperstack"
    vendor_kind = "gpu_cloud"
    fetch_style = "HTML page"
    start_urls = [PAGE_URL]
    min_offers = 5

    def parse(self, response: Response) -> Iterable[RawOffer]:
        rows: list[tuple[dict[str, str], str, str]] = []
        for card in response.css(".page-price_card"):
            heading = text(card.css(".page-price_card_top_content h3")[:1])
            kind = CARDS.get(heading)
            if kind is None:
                self.skip(f"price card {heading!r}, not a GPU on-demand or spot card")
                continue
            headers = [text(h) for h in card.css(".page-price_card_head_item")]
            for item in card.css(".page-price_card_row_item"):
                cells = dict(zip(headers, (text(c) for c in item.css(
                    ".page-price_card_row_item_col")), strict=False))
                rows.append((cells, headers[-1], kind))
        # the Spot card has no VRAM column: a model the page lists with its VRAM elsewhere
        # ("NVIDIA A100", 80) is that card
        vram = {cells.get(MODEL): cells[VRAM] for cells, _, _ in rows if cells.get(VRAM)}
        for cells, price_header, kind in rows:
            yield from self.row_offers({VRAM: vram.get(cells.get(MODEL)), **cells},
                                       price_header, kind, response)

    def row_offers(self, cells: dict[str, str], price_header: str, kind: str,
                   response: Response) -> Iterable[RawOffer]:
        model = cells.get(MODEL, "")
        if not model or not cells.get(price_header):
            self.skip("a row without a GPU model or a price")
            return
        for region in REGIONS.get(model, (NO_LOCATION,)):
            yield self.offer(
                response, sku=model, gpu_text=model, gpu_count=1, price_per_card=True,
                vram_gb=cells.get(VRAM),
                region_text=region, offer_kind=kind, price_text=cells[price_header],
                billing_period="hour", available=None,
                vendor_data={"row": cells, "placed_by": "skypilot-catalog"
                             if model in REGIONS else None})
