"""Nebius AI Cloud: the public price list https://nebius.com/prices (no key), GPU prices per
GPU-hour.

Where the knowledge comes from: a public daily collector reads this page with plain HTTP
(ewyluda/gpu-price-index src/gpu_index/sources/nebius.py @ 078a7891) and keeps a real copy of it
as a test fixture (tests/fixtures/nebius.html @ eb72cc64): the page renders "tables" of divs,
`.pc-highlight-table-block__root`, each under an h2 title (`.pc-title-item__text`: "NVIDIA GPU
Instances", "Preemptible NVIDIA GPU Instances", "CPU-only instances", ...), a head row and body
rows of `.pc-highlight-table-block__cell` texts. The GPU table's columns are Item, vCPUs, RAM, GB
and one or more GPU-hour prices: "On-demand, GPU-hour" and, when a change is announced, one more
column per change ("GPU-hour (Effective October 1, 2026)").

Read here: the "NVIDIA GPU Instances" table. Of its GPU-hour columns the one in force on the day
the page was fetched is read, as the collector does: the latest announced column whose date has
come, else the standing one; an announced column's offers carry its date as `effective_at`.
Prices as written ("$4.50", "from $1.55": a configurable instance's starting price, which
normalization marks); "Contact us" is no list price (skipped, counted). The vCPU and RAM cells
are the instance's for one GPU, with the unit the header states (GB).

Not read: the preemptible table (its "from $0.79" prices carry no date in any record found),
CPU-only instances and storage. The page names no region, and SkyPilot's catalog lists the same
GPU prices in eu-north1, eu-west1 and us-central1 (skypilot-catalog catalogs/v8/nebius/vms.csv @
0082b043): so the offers are placed in Finland (eu-north1, country only), an assumption.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, date, datetime

from scrapy.http import Response

from spiders.base.spider import GpuPriceSpider
from spiders.items import RawOffer
from spiders.middlewares.raw_archive import captured_at

PRICES_URL = "https://nebius.com/prices"
GPU_TABLE = "NVIDIA GPU Instances"
BLOCK = ".pc-highlight-table-block"
PRICE_COLUMN = "GPU-hour"
ANNOUNCED = re.compile(r"\(Effective (\w+ \d{1,2}, \d{4})\)")
NO_LIST_PRICE = "Contact us"
REGION = "Finland"


class NebiusSpider(GpuPriceSpider):
    name = "nebius"
    vendor = "Nebius"
    vendor_kind = "gpu_cloud"
    fetch_style = "HTML"
    start_urls = [PRICES_URL]
    price_per_card = True   # every price column is per GPU-hour
    min_offers = 4

    def parse(self, response: Response) -> Iterable[RawOffer]:
        tables = {title: table for title, table in page_tables(response)}
        if GPU_TABLE not in tables:
            raise ValueError(f"nebius: no {GPU_TABLE!r} table in {response.url}: "
                             f"tables {sorted(tables)}")
        for title in set(tables) - {GPU_TABLE}:
            self.skip(f"table {title!r} is not read")
        header, *rows = tables[GPU_TABLE]
        column, effective_at = price_column(header, fetched_on(response))
        for cells in rows:
            row = dict(zip(header, cells, strict=False))
            price = row.get(header[column], "")
            if price in ("", NO_LIST_PRICE):
                self.skip("Contact us: no list price")
                continue
            yield self.offer(
                response, sku=row["Item"], gpu_text=row["Item"], region_text=REGION,
                offer_kind="on_demand", price_text=price, billing_period="hour",
                available=None, effective_at=effective_at,
                vendor_data={"row": row, "price_column": header[column]}, **machine(row))


def machine(row: dict[str, str]) -> dict[str, str]:
    """vcpus_text and memory_text of one GPU's instance, as written with the header's unit
    ("RAM, GB": "200" -> "200 GB"); a configurable instance's range ("8-40") is no one
    machine, so it is not given."""
    said = {}
    for field, header, unit in (("vcpus_text", "vCPUs", ""), ("memory_text", "RAM, GB", " GB")):
        text = row.get(header) or ""
        if text and "-" not in text:
            said[field] = f"{text}{unit}"
    return said


def page_tables(response: Response) -> Iterable[tuple[str, list[list[str]]]]:
    """(title, [head row, *body rows]) of each price table on the page, cells as texts."""
    for root in response.css(f"{BLOCK}__root"):
        title = " ".join(root.css(".pc-title-item__text ::text").getall()).strip()
        rows = [[" ".join(cell.css("::text").getall()).strip()
                 for cell in row.css(f"{BLOCK}__cell")]
                for row in root.css(f"{BLOCK}__head {BLOCK}__row, {BLOCK}__body {BLOCK}__row")]
        if rows:
            yield title, rows


def price_column(header: list[str], today: date) -> tuple[int, str | None]:
    """(index, ISO effective date or None) of the GPU-hour column in force on `today`: the latest
    announced column whose date has come, else the standing one; a header without one fails."""
    standing, latest = None, (None, None)
    for index, text in enumerate(header):
        if PRICE_COLUMN not in text:
            continue
        if (announced := ANNOUNCED.search(text)) is None:
            standing = index if standing is None else standing
            continue
        day = datetime.strptime(announced[1], "%B %d, %Y").date()
        if day <= today and (latest[1] is None or day.isoformat() > latest[1]):
            latest = (index, day.isoformat())
    if latest[0] is not None:
        return latest[0], latest[1]
    if standing is None:
        raise ValueError(f"nebius: no {PRICE_COLUMN!r} price column in the header {header}")
    return standing, None


def fetched_on(response: Response) -> date:
    """The day the page was fetched: the recorded capture's, else today (a live crawl)."""
    when = captured_at(response)
    return datetime.fromisoformat(when.replace("Z", "+00:00")).date() if when else \
        datetime.now(UTC).date()
