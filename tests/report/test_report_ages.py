"""The report says how old its prices are (issue 38, item 4): each cheapest offer shows the
date its price held and its age, the cheapest offers leave out the prices older than the horizon
and say how many, and a page built mostly from old prices opens with a line that says so."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from tests.helpers.observations import TODAY
from tests.helpers.report_market import LAST_DAY, build_database, build_page, obs

CARD = {"gpu_model": "RTX4090-24GB", "vram_gb": Decimal(24)}
OLD = LAST_DAY - timedelta(days=200)


def page(tmp_path, rows: list[dict]) -> str:
    db = build_database(tmp_path / "prices.db", rows)
    return build_page(db, tmp_path / "index.html").path.read_text(encoding="utf-8")


def cheapest_section(html: str) -> str:
    """The cheapest offers, their words on one line each."""
    return " ".join(html[html.index('<section id="cheapest">'):
                         html.index('<h3 id="outliers">')].split())


def test_a_current_page_dates_each_cheapest_price_and_opens_without_a_warning(tmp_path):
    html = page(tmp_path, [obs(2.0, **CARD, vendor="Alpha", source="src_alpha")])
    assert 'id="old-prices"' not in html
    cheapest = cheapest_section(html)
    assert "as of (age)" in cheapest and "2026-11-30 (1 d)" in cheapest
    assert "no older than 180 days" in cheapest and "Left out: 0 older offers and 0 offers" \
        in cheapest


def test_a_page_of_mostly_old_prices_says_so_first_and_leaves_them_out_of_the_cheapest(
        tmp_path):
    html = page(tmp_path, [obs(2.0, **CARD, vendor="Alpha", source="src_alpha"),
                           *(obs(price, OLD, **CARD, vendor=v, source=f"src_{v.lower()}")
                             for v, price in (("Bravo", 1.5), ("Charlie", 1.6), ("Delta", 1.7)))])
    assert (TODAY - OLD.date()).days == 201              # the premise: far beyond the horizon
    line = "most of these prices are older than 180 days: the newest is 2026-11-30 (1 day)"
    assert line in " ".join(html.split())
    # first: above the lede, the facts and every section
    assert html.index('id="old-prices"') < html.index('class="lede"') < html.index(
        '<section id="cheapest">')
    cheapest = cheapest_section(html)
    assert ">Alpha<" in cheapest and ">Bravo<" not in cheapest     # the cheaper, old, left out
    assert "Left out: 3 older offers and 0 offers their record no longer lists" in cheapest


def test_a_page_of_only_old_prices_names_its_newest(tmp_path):
    newest = LAST_DAY - timedelta(days=199)              # 200 days before the test clock's today
    html = page(tmp_path, [obs(2.0, newest, **CARD, vendor="Alpha", source="src_alpha"),
                           obs(1.8, OLD, **CARD, vendor="Bravo", source="src_bravo")])
    assert (f"all of these prices are older than 180 days: the newest is {newest:%Y-%m-%d} "
            "(200 days)") in " ".join(html.split())
    cheapest = cheapest_section(html)
    assert ">Alpha<" not in cheapest and "Left out: 2 older offers" in cheapest
    # the empty table says why it is empty, not "No offers yet."
    assert ("No current offer among 2 counted: 2 offers older than 180 days left out" in cheapest
            and "No offers yet" not in cheapest)


def test_an_offer_its_record_no_longer_lists_is_left_out_and_counted(tmp_path):
    # one source: Bravo's cheaper offer was last seen 20 days before the source's newest crawl,
    # well within the horizon, but the source stopped listing it
    html = page(tmp_path, [obs(2.0, **CARD, sku="alpha", source="src_one"),
                           obs(1.0, LAST_DAY - timedelta(days=20), **CARD, sku="bravo",
                               source="src_one")])
    cheapest = cheapest_section(html)
    assert "2.00" in cheapest and "1.00" not in cheapest
    assert "Left out: 0 older offers and 1 offers their record no longer lists" in cheapest


def test_an_empty_database_says_no_offers_yet(tmp_path):
    assert "No offers yet: the database holds no counted price" in cheapest_section(
        page(tmp_path, []))
