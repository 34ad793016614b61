"""Lium public nodes feed: one offer per node at its per-GPU ask, secure or spot."""

from decimal import Decimal

import pytest
from scrapy.utils.test import get_crawler

from pipelines.normalize import normalize_offer
from spiders.vendors.lium import LiumSpider, place
from tests.helpers.responses import file_response
from tests.helpers.spider_contract import check_contract


def _spider():
    crawler = get_crawler(LiumSpider)
    return LiumSpider.from_crawler(crawler, crawl_id="test"), crawler


@pytest.fixture(scope="module")
def offers() -> list[dict]:
    spider, _ = _spider()
    return list(spider.parse(file_response("lium", "nodes.json")))


def test_every_node_is_one_offer_and_meets_the_contract(offers):
    assert len(offers) == 4
    check_contract("lium", offers)


@pytest.mark.parametrize(("sku", "card", "price", "kind", "state"), [
    ("ebdfdbe2-875a-4caa-8eea-1ab5c2a763e1", "RTX5090-32GB", "0.5", "on_demand", None),
    ("f092246d-5704-4c9e-b57f-7c0710a06deb", "H200-141GB", "3.99", "on_demand", "Mississippi"),
    ("45af0308-a13c-497f-93ea-ab06144eee29", "RTX5090-32GB", "0.5", "spot", "Minnesota"),
    ("6780e503-6861-4dca-bdec-ca9dcf37e8d0", "A100-80GB", "1.23", "on_demand", "Virginia"),
])
def test_each_node_is_its_card_at_its_per_gpu_ask(offers, sku, card, price, kind, state):
    row = normalize_offer(next(o for o in offers if o["sku"] == sku))
    assert (row["gpu_model"], row["offer_kind"], row["province_or_state"]) == (card, kind, state)
    assert row["price_per_gpu_hour_usd"] == Decimal(price)
    assert row["prices_as_of"].isoformat() == "2026-09-10"


def test_the_offer_is_the_whole_node_with_its_partial_rental_kept(offers):
    h200 = next(o for o in offers if o["gpu_text"] == "H200")
    assert (h200["gpu_count"], h200["vcpus"], h200["memory"], h200["disk"]) == (8, 192, 2015, 3575)
    assert h200["vendor_data"]["min_rentable_gpu_count"] == 1
    assert h200["vendor_data"]["available_gpu_count"] == 5 and h200["available"] is True


@pytest.mark.parametrize(("node", "text"), [
    ({"region": "MS", "country_code": "US"}, "MS, US"),
    ({"region": "13", "country_code": "JP"}, "13, JP"),
    ({"region": None, "country_code": "DE"}, "DE"),
])
def test_the_place_is_the_subdivision_with_its_country_code(node, text):
    assert place(node) == text


@pytest.mark.parametrize(("change", "skipped"), [
    ({"price_per_gpu_hour": None}, "a node without gpu_model or price_per_gpu_hour"),
    ({"gpu_model": None}, "a node without gpu_model or price_per_gpu_hour"),
    ({"tier": "reserved"}, "tier 'reserved', neither secure nor spot"),
])
def test_nodes_without_a_card_price_or_known_tier_are_skipped_and_counted(change, skipped):
    spider, crawler = _spider()
    response = file_response("lium", "nodes.json")
    node = {**response.json()["nodes"][2], **change}
    assert list(spider.parse_offer(node, response)) == []
    assert any(k.endswith(skipped) for k in crawler.stats.get_stats())


def test_a_node_with_fewer_gpus_free_than_its_smallest_order_is_not_available():
    spider, _ = _spider()
    response = file_response("lium", "nodes.json")
    node = {**response.json()["nodes"][0], "available_gpu_count": 3}   # min order 8
    assert [o["available"] for o in spider.parse_offer(node, response)] == [False]
