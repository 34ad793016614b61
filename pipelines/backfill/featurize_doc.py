"""louis-she/featurize-doc's `docs/prices.md`: Featurize's price table (价格表), one row per
instance type (实例配置: '3090 常规机型') with an hourly price and a 1-, 7- and 30-day rental
('0.7 元', '180 元'). Each price cell is an offer of one card for that period, as the live
featurize_cn spider reads the page this file renders to: its column headers, place and kind are
that spider's (spiders/vendors/idc_tables.toml, [html_table.featurize_cn]), read from there.
Pure.

* The table is found by its card column; a version without it lists no offer (counted).
* A cell that is not a number of 元 is no offer (counted); an empty or '-' cell is no price.
* A row naming a card an earlier row of the version named is left out (counted): one version
  (17ee0a0, 2020-10-22) wrote '3080 常规机型' twice, the second for the 3090 the next commit
  names.
"""

from __future__ import annotations

import re

from pipelines.backfill.markdown_tables import table_with
from pipelines.backfill.offers import ArchiveOffer, Parsed, count_left_out

CLOUD = "featurize_cn"
PRICE_CELL_RE = re.compile(r"^\d+(?:\.\d+)?\s*元$")
NO_PRICE = frozenset({"", "-", "—"})


def parse_featurize_doc(text: str) -> Parsed:
    """The offers of one version of prices.md."""
    from spiders.registry import spider_class  # it loads Scrapy: not at import

    page = spider_class(CLOUD)
    card_column, periods = page.columns["gpu_text"], page.prices
    table = table_with(text, card_column)
    if table is None:
        return Parsed([], {"no price table": 1})
    offers: list[ArchiveOffer] = []
    left_out: dict[str, int] = {}
    for header in periods.values():
        if header not in table.headers:
            count_left_out(left_out, f"no {header} column")
    seen: set[str] = set()
    for line, row in table.rows:
        card = row.get(card_column, "")
        if not card:
            count_left_out(left_out, "a row without a card")
            continue
        if card in seen:
            count_left_out(left_out, "a row repeating an earlier row's card")
            continue
        seen.add(card)
        for period, header in periods.items():
            cell = row.get(header, "")
            if cell in NO_PRICE:
                continue
            if not PRICE_CELL_RE.match(cell):
                count_left_out(left_out, "a price cell that is not a number of 元")
                continue
            offers.append(ArchiveOffer(CLOUD, line, {
                "sku": card, "gpu_text": card, "gpu_count": "1", "region_text": page.region,
                "offer_kind": page.offer_kind, "price_text": cell, "billing_period": period}))
    return Parsed(offers, left_out)
