"""TensorDock locations: one GPU offer per card model and location, the card from v0Name."""

from decimal import Decimal

import pytest
from scrapy.utils.test import get_crawler

from pipelines.normalize import normalize_offer
from spiders.vendors.tensordock import TensordockSpider, card_text, place
from tests.helpers.responses import file_response
from tests.helpers.spider_contract import check_contract


def _spider():
    crawler = get_crawler(TensordockSpider)
    return TensordockSpider.from_crawler(crawler, crawl_id="test"), crawler


@pytest.fixture(scope="module")
def offers() -> list[dict]:
    spider, _ = _spider()
    return list(spider.parse(file_response("tensordock", "locations.json")))


def test_every_priced_gpu_of_every_location_is_one_offer_and_meets_the_contract(offers):
    assert len(offers) == 36
    assert len({o["vendor_data"]["location_id"] for o in offers}) == 21
    check_contract("tensordock", offers)


@pytest.mark.parametrize(("v0_name", "text"), [
    ("geforcertx4090-pcie-24gb", "geforce rtx4090-pcie-24gb"),
    ("geforce rtx4090-pcie-24gb", "geforce rtx4090-pcie-24gb"),
    ("a100-sxm4-80gb", "a100-sxm4-80gb"),
    ("rtxa6000-pcie-48gb", "rtxa6000-pcie-48gb"),
])
def test_only_a_glued_geforce_brand_is_written_apart(v0_name, text):
    assert card_text(v0_name) == text


@pytest.mark.parametrize(("location", "text"), [
    ({"city": "Chubbuck", "stateprovince": "Idaho", "country": "United States"},
     "Chubbuck, Idaho, United States"),
    ({"city": "Mumbai", "stateprovince": "", "country": "India"}, "Mumbai, India"),
])
def test_the_place_is_city_state_and_country_as_named(location, text):
    assert place(location) == text


@pytest.mark.parametrize(("v0_name", "city", "card", "price", "country"), [
    ("h100-sxm5-80gb", "Seattle", "H100-80GB", "1.99", "US"),
    ("a100-sxm4-80gb", "Mischii", "A100-80GB", "0.85", "RO"),
    ("geforcertx4090-pcie-24gb", "Ottawa", "RTX4090-24GB", "0.33", "CA"),
    ("geforcertx5090-pcie-32gb", "Winnipeg", "RTX5090-32GB", "0.45", "CA"),
    ("rtxa4000-pcie-16gb", "Tallinn", "RTXA4000-16GB", "0.1", "EE"),
])
def test_cards_prices_and_countries_normalize(offers, v0_name, city, card, price, country):
    offer = next(o for o in offers if o["vendor_data"]["v0_name"] == v0_name
                 and o["region_text"].startswith(city))
    row = normalize_offer(offer)
    assert (row["gpu_model"], row["country"]) == (card, country)
    assert row["price_per_gpu_hour_usd"] == Decimal(price)
    assert row["prices_as_of"].isoformat() == "2026-03-23"


def test_free_count_is_availability_and_unit_prices_stay_apart(offers):
    offer = offers[0]
    assert offer["available"] is True and offer["vendor_data"]["max_count"] == 3
    assert offer["vendor_data"]["pricing"]["per_vcpu_hr"] == 0.003
    spider, crawler = _spider()
    response = file_response("tensordock", "locations.json")
    location = {"id": "x", "city": "C", "country": "Canada",
                "gpus": [{"v0Name": "l4-pcie-24gb", "price_per_hr": 0.2, "max_count": 0},
                         {"v0Name": "l4-pcie-24gb", "price_per_hr": 0}]}
    assert [o["available"] for o in spider.parse_offer(location, response)] == [False]
    assert any(k.endswith("a GPU without price_per_hr") for k in crawler.stats.get_stats())
