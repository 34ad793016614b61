"""CoreWeave: the public pricing page https://www.coreweave.com/pricing (no key), on-demand and
spot prices per instance.

Where the knowledge comes from: a public daily collector reads this page with plain HTTP
(ewyluda/gpu-price-index src/gpu_index/sources/coreweave.py @ 078a7891) and keeps a real copy of
it as a test fixture (tests/fixtures/coreweave.html @ 078a7891); another public client pins the
same markup (code-search index file 60267220593: "verified live 2026-08-16"). The GPU tables are
`div.table-v2.gpu-pricing`, one per region section (`h5 .eyebrow` "REGION: NORTH AMERICA",
"REGION: EUROPE"); each row a `div.table-row-v2` with the model `h3.table-model-name` (its
`data-product` slug), the labelled prices `span.instance-price .item-value` ("$49.24", the whole
instance's per hour; empty with a "Contact sales" link) and `span.spot-price .item-value` ("N/A":
no spot), and the machine as `.table-meta-text-right` pairs of value and label (GPU Count, VRAM,
vCPUs, Local Storage (TB), System RAM). The per-GPU "Inference Single CPU Price" is not read (the
instance price is). A product listed twice in one region (general and Kubernetes listings, as
the collector notes) is read once.

Region: the section's heading as written ("REGION: NORTH AMERICA"); regions.csv places that
section in the US (country only, an assumption); "REGION: EUROPE" names no country: normalization
quarantines it (an unknown region).
"""

from __future__ import annotations

from collections.abc import Iterable

from scrapy.http import Response
from scrapy.selector import Selector

from spiders.base.spider import GpuPriceSpider
from spiders.items import RawOffer

PRICING_URL = "https://www.coreweave.com/pricing"
# offer kind -> the labelled price span
PRICE_SPANS = {"on_demand": "span.instance-price", "spot": "span.spot-price"}
NOT_SOLD = ("", "N/A")
# the machine's labelled values -> (RawOffer field, unit the page states for it)
MACHINE = {"vCPUs": ("vcpus_text", ""), "System RAM": ("memory_text", " GB"),
           "Local Storage (TB)": ("disk_text", " TB")}


class CoreweaveSpider(GpuPriceSpider):
    name = "coreweave"
    vendor = "CoreWeave"
    vendor_kind = "gpu_cloud"
    fetch_style = "HTML"
    start_urls = [PRICING_URL]
    min_offers = 6

    def parse(self, response: Response) -> Iterable[RawOffer]:
        sections = response.css("div.section-content")
        tables = [(section, region_of(section)) for section in sections
                  if section.css("div.table-v2.gpu-pricing")]
        if not tables:
            raise ValueError(f"coreweave: no GPU pricing table in {response.url}")
        for section, region in tables:
            seen: set[str] = set()
            for row in section.css("div.table-row-v2"):
                product = row.css("h3.table-model-name::attr(data-product)").get()
                if product in seen:
                    self.skip("product listed twice in one region")
                    continue
                seen.add(product)
                yield from self.row_offers(response, row, product, region)

    def row_offers(self, response: Response, row: Selector, product: str | None,
                   region: str) -> Iterable[RawOffer]:
        name = (row.css("h3.table-model-name::text").get() or "").strip()
        meta = labelled_values(row)
        for kind, span in PRICE_SPANS.items():
            price = " ".join(row.css(f"{span} .item-value::text").getall()).strip()
            if price in NOT_SOLD:
                self.skip(f"{kind} not sold (Contact sales or N/A)")
                continue
            yield self.offer(
                response, sku=product or name, gpu_text=name, gpu_count=meta.get("GPU Count"),
                vram_gb=f"{meta['VRAM']} GB" if meta.get("VRAM") else None,
                region_text=region, offer_kind=kind, price_text=price, billing_period="hour",
                available=None, vendor_data={"product": product, "meta": meta},
                **{field: f"{meta[label]}{unit}" for label, (field, unit) in MACHINE.items()
                   if meta.get(label)})


def region_of(section: Selector) -> str:
    """The section's region heading as written ("REGION: NORTH AMERICA")."""
    return " ".join(section.css("h5 .eyebrow::text").getall()).strip()


def labelled_values(row: Selector) -> dict[str, str]:
    """{label: value} of a row's machine figures, as written ("GPU Count": "8", "System RAM":
    "2,048")."""
    said = {}
    for pair in row.css("div.table-meta-text-right"):
        texts = [t.strip() for t in pair.css("div::text").getall() if t.strip()]
        if len(texts) == 2:
            value, label = texts
            said[label] = value
    return said
