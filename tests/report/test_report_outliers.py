"""The report's note on possible outliers (marts.price_outliers): a price held back from the
cheapest offers is listed with its card's median and how far from it it is, escaped like every
scraped value; a market without outliers says so."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

from tests.helpers.report_market import LAST_DAY, build_database, build_page, obs

CARD = {"gpu_model": "RTX4090-24GB", "vram_gb": Decimal(24)}
SCRIPT_SKU = "<script>alert(1)</script>"


def rtx_market(day=LAST_DAY, **odd_overrides) -> list[dict]:
    """Six vendors at 1.8 to 2.6 CNY/h (median 2.2), and one listing 0.05."""
    prices = {"Alpha": 1.8, "Bravo": 2.0, "Charlie": 2.2, "Delta": 2.2, "Echo": 2.4,
              "Foxtrot": 2.6}
    return [*(obs(p, day, **CARD, vendor=v, source=f"src_{v.lower()}") for v, p in prices.items()),
            obs("0.05", day, **CARD, vendor="Odd", source="src_odd", sku=SCRIPT_SKU,
                **odd_overrides)]


def outlier_section(html: str) -> str:
    start = html.index('<h3 id="outliers">')
    return html[start:html.index("</section>", start)]


def test_a_held_price_is_listed_in_the_outlier_note_not_in_the_cheapest(tmp_path):
    db = build_database(tmp_path / "prices.db", rtx_market())
    html = build_page(db, tmp_path / "index.html").path.read_text(encoding="utf-8")
    note = outlier_section(html)
    assert "Held back as possible outliers (1)" in note
    [row] = re.findall(r"<tr><td[^>]*>held back</td>.*?</tr>", note, re.S)
    for shown in ("RTX4090-24GB", "0.05", "2.20", "×0.023", "limit ×8, 7 vendors", "Odd",
                  "&lt;script&gt;alert(1)&lt;/script&gt;"):
        assert shown in row, shown
    cheapest = html[html.index('<section id="cheapest">'):html.index('<h3 id="outliers">')]
    assert ">Odd<" not in cheapest and ">Alpha<" in cheapest
    assert "<script>alert(1)" not in html


def test_a_confirmed_price_is_shown_in_both(tmp_path):
    earlier = LAST_DAY - timedelta(hours=1)
    db = build_database(tmp_path / "prices.db", [*rtx_market(earlier), *rtx_market()])
    html = build_page(db, tmp_path / "index.html").path.read_text(encoding="utf-8")
    note = outlier_section(html)
    assert "Held back as possible outliers (0)" in note and "confirmed, shown" in note
    cheapest = html[html.index('<section id="cheapest">'):html.index('<h3 id="outliers">')]
    assert ">Odd<" in cheapest


def test_no_outliers_says_so(tmp_path):
    db = build_database(tmp_path / "prices.db", rtx_market()[:-1])
    html = build_page(db, tmp_path / "index.html").path.read_text(encoding="utf-8")
    note = outlier_section(html)
    assert "(0)" in note and "None: every judged price is within its card" in note
    assert "<table>" not in note
