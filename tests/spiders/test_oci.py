"""OCI: the public price list (no key). The snapshot holds items of a trimmed real answer
(ewyluda/gpu-price-index tests/fixtures/oracle.json @ 1e77fb70, lastUpdated 2026-10-01); what is
OCI's own: which parts are cloud GPU rentals, which shape and card each part prices."""

from decimal import Decimal

import pytest
from scrapy.utils.test import get_crawler

from pipelines.normalize import normalize_offer
from spiders.vendors.oci import PART_SHAPES, PRICE_LIST_URL, OciSpider, on_demand_usd
from tests.helpers.responses import file_response, json_response
from tests.helpers.spider_contract import check_contract

crawler = get_crawler(OciSpider)
spider = OciSpider.from_crawler(crawler, crawl_id="test")


@pytest.fixture(scope="module")
def offers() -> list[dict]:
    return list(spider.parse(file_response("oci", "products.json")))


@pytest.fixture(scope="module")
def by_sku(offers) -> dict[str, dict]:
    return {o["sku"]: o for o in offers}


def test_only_cloud_gpu_parts_of_a_known_shape_are_offers(offers):
    assert len(offers) == 8
    stats = crawler.stats.get_stats()
    # the VMware node, the H100T of "Compute - GPU - Other" and the Cloud@Customer L40S
    assert stats["offers_skipped/not an OCI cloud GPU part priced per GPU-hour"] == 3
    # GB200, MI355X, X7, E4: parts no public client maps to a shape and card
    assert stats["offers_skipped/GPU part with no known shape and card"] == 4


@pytest.mark.parametrize("sku, model, count, usd", [
    ("BM.GPU.H100.8", "H100-80GB", 8, "10"),
    ("BM.GPU.H200.8", "H200-141GB", 8, "10"),
    ("BM.GPU.B200.8", "B200-180GB", 8, "14"),
    ("BM.GPU.MI300X.8", "MI300X-192GB", 8, "6"),
    ("BM.GPU.A100-v2.8", "A100-80GB", 8, "4"),   # the list says "A100 - v2": the table says 80 GB
    ("BM.GPU.L40S.4", "L40S-48GB", 4, "3.5"),
    ("B95909", "A10-24GB", 1, "2"),               # every A10 shape: the part names no shape
    ("BM.GPU.B300.8", "B300-270GB", 8, "15"),
])
def test_each_part_is_one_gpu_hour_of_its_shape(by_sku, sku, model, count, usd):
    offer = by_sku[sku]
    assert (offer["gpu_count"], offer["price_amount"]) == (count, usd)
    assert offer["price_per_card"] is True
    row = normalize_offer(offer)
    assert (row["gpu_model"], row["price_per_gpu_hour_usd"]) == (model, Decimal(usd))
    assert (row["country"], row["offer_kind"]) == ("US", "on_demand")


@pytest.mark.parametrize("localizations, price", [
    ([{"currencyCode": "USD", "prices": [{"model": "PAY_AS_YOU_GO", "value": 6}]}], 6),
    ([{"currencyCode": "EUR", "prices": [{"model": "PAY_AS_YOU_GO", "value": 5.5}]}], None),
    ([{"currencyCode": "USD", "prices": [{"model": "MONTHLY_COMMIT", "value": 4}]}], None),
    ([{"currencyCode": "USD", "prices": [{"model": "PAY_AS_YOU_GO", "value": None}]}], None),
    ([], None),
])
def test_only_the_usd_pay_as_you_go_price_is_read(localizations, price):
    assert on_demand_usd({"currencyCodeLocalizations": localizations}) == price


def test_a_gpu_part_without_a_usd_price_is_skipped_not_guessed():
    part = next(iter(PART_SHAPES))
    body = {"items": [{"partNumber": part, "metricName": "GPU Per Hour",
                       "serviceCategory": "Compute - GPU", "currencyCodeLocalizations": []}]}
    assert list(spider.parse(json_response(PRICE_LIST_URL, body))) == []


def test_a_changed_answer_is_a_loud_error():
    with pytest.raises(ValueError, match="no list at 'items'"):
        list(spider.parse(json_response(PRICE_LIST_URL, {"products": []})))


def test_contract(offers):
    check_contract("oci", offers)
