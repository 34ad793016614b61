"""Hyperstack pricing page: the On-Demand GPU and Spot VM cards, rows read by their headers,
each card placed in the regions a public client's catalog lists it in."""

from decimal import Decimal

import pytest
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from pipelines.normalize import normalize_offer
from spiders.parsing.regions import NO_LOCATION
from spiders.vendors.hyperstack import PAGE_URL, HyperstackSpider
from tests.helpers.responses import file_response
from tests.helpers.spider_contract import check_contract


def _spider():
    crawler = get_crawler(HyperstackSpider)
    return HyperstackSpider.from_crawler(crawler, crawl_id="test"), crawler


@pytest.fixture(scope="module")
def offers() -> list[dict]:
    spider, _ = _spider()
    return list(spider.parse(file_response("hyperstack", "gpu_pricing.html")))


def _by(offers, model, kind="on_demand"):
    return [o for o in offers if (o["gpu_text"], o["offer_kind"]) == (model, kind)]


def test_every_row_is_an_offer_per_region_and_meets_the_contract(offers):
    # 9 on-demand rows (H100 SXM in two regions) + 2 spot rows
    assert len(offers) == 12
    check_contract("hyperstack", offers)


@pytest.mark.parametrize(("model", "kind", "regions", "price", "card"), [
    ("NVIDIA H100 SXM", "on_demand", ["CANADA-1", "US-1"], "3.20", "H100-80GB"),
    ("NVIDIA A100 NVLink", "on_demand", ["CANADA-1"], "1.40", "A100-80GB"),
    ("NVIDIA A100", "spot", ["CANADA-1"], "1.08", "A100-80GB"),
    ("NVIDIA H100 PCIe", "spot", ["CANADA-1"], "2.00", "H100-80GB"),
])
def test_cards_are_placed_where_the_catalog_lists_them(offers, model, kind, regions, price, card):
    found = _by(offers, model, kind)
    assert [o["region_text"] for o in found] == regions
    row = normalize_offer(found[0])
    assert (row["gpu_model"], row["price_per_gpu_hour_usd"]) == (card, Decimal(price))
    assert row["prices_as_of"].isoformat() == "2026-10-10"


def test_a_card_no_client_places_carries_no_place(offers):
    assert [o["region_text"] for o in _by(offers, "NVIDIA B200")] == [NO_LOCATION]


def test_the_spot_card_takes_the_vram_the_page_states_for_the_same_model(offers):
    assert _by(offers, "NVIDIA A100", "spot")[0]["vram_gb"] == "80"
    assert _by(offers, "NVIDIA H100 PCIe", "spot")[0]["vram_gb"] is None


def test_a_non_breaking_space_before_the_price_is_plain_text(offers):
    assert _by(offers, "NVIDIA A100")[0]["price_text"] == "$1.35"


PAGE = """<div class="page-price_card"><div class="page-price_card_top_content">
<h3><span>{title}</span> Pricing</h3></div>
<div class="page-price_card_head_item"><span>VRAM (GB)</span></div>
<div class="page-price_card_head_item"><span>GPU Model </span></div>
<div class="page-price_card_head_item"><span>Pricing Per Hour</span></div>
<div class="page-price_card_row_item">
<div class="page-price_card_row_item_col"><span>80</span></div>
<div class="page-price_card_row_item_col"><span>{model}</span></div>
<div class="page-price_card_row_item_col"><span>$9.99</span></div></div></div>"""


@pytest.mark.parametrize(("title", "model", "read", "skipped"), [
    ("On-Demand GPU", "NVIDIA H100", 1, None),
    ("Reservation", "NVIDIA H100", 0, "price card 'Reservation Pricing'"),
    ("On-Demand GPU", "", 0, "a row without a GPU model or a price"),
])
def test_cards_and_rows_are_read_by_their_headings(title, model, read, skipped):
    spider, crawler = _spider()
    body = PAGE.format(title=title, model=model).encode()
    offers = list(spider.parse(HtmlResponse(PAGE_URL, body=body, encoding="utf-8")))
    assert len(offers) == read
    if read:   # columns by their headers; the price is the card's last column
        assert (offers[0]["gpu_text"], offers[0]["vram_gb"], offers[0]["price_text"]) == (
            "NVIDIA H100", "80", "$9.99")
    if skipped:
        assert any(skipped in k for k in crawler.stats.get_stats())
