"""DataCrunch (Verda): the keyless instance-type catalogue. The items have gpuhunt's recorded
shape and the prices a public collector recorded on 2026-08-23; what is DataCrunch's own: each
instance type is an on-demand and a spot offer for the whole instance, CPU-only types skipped."""

from decimal import Decimal

import pytest
from scrapy.utils.test import get_crawler

from pipelines.normalize import normalize_offer
from spiders.vendors.datacrunch import INSTANCE_TYPES_URL, DatacrunchSpider, machine
from tests.helpers.responses import file_response, json_response
from tests.helpers.spider_contract import check_contract

crawler = get_crawler(DatacrunchSpider)
spider = DatacrunchSpider.from_crawler(crawler, crawl_id="test")


@pytest.fixture(scope="module")
def offers() -> list[dict]:
    return list(spider.parse(file_response("datacrunch", "instance_types.json")))


@pytest.fixture(scope="module")
def by_key(offers) -> dict[tuple, dict]:
    return {(o["sku"], o["offer_kind"]): o for o in offers}


def test_each_gpu_instance_type_is_an_on_demand_and_a_spot_offer(offers):
    assert len(offers) == 7 * 2
    assert crawler.stats.get_value("offers_skipped/instance type without GPUs") == 1


@pytest.mark.parametrize("sku, kind, model, count, per_gpu_usd", [
    ("1H100.80S.30V", "on_demand", "H100-80GB", 1, "3.25"),
    ("8H100.80S.176V", "on_demand", "H100-80GB", 8, "3.25"),   # 26.00 for the instance
    ("8H100.80S.176V", "spot", "H100-80GB", 8, "1.625"),
    ("1H200.141S.44V", "on_demand", "H200-141GB", 1, "4"),
    ("8A100.40S.176V", "spot", "A100-40GB", 8, "0.645"),
])
def test_prices_are_the_whole_instances(by_key, sku, kind, model, count, per_gpu_usd):
    row = normalize_offer(by_key[sku, kind])
    assert (row["gpu_model"], row["gpu_count"]) == (model, count)
    assert row["price_per_gpu_hour_usd"] == Decimal(per_gpu_usd)
    assert (row["country"], row["offer_kind"]) == ("FI", kind)


def test_the_price_is_passed_as_served(by_key):
    offer = by_key["8H100.80S.176V", "on_demand"]
    assert (offer["price_amount"], offer["currency"], offer["gpu_text"]) == (
        "26.00", "USD", "8x H100 SXM5 80GB")


@pytest.mark.parametrize("item, said", [
    ({"cpu": {"number_of_cores": 30}, "memory": {"size_in_gigabytes": 120}},
     {"vcpus": 30, "memory": 120, "memory_unit": "GB"}),
    ({"cpu": {}, "memory": None}, {}),
])
def test_machine_as_served(item, said):
    assert machine(item) == said


def test_a_missing_spot_price_is_no_spot_offer():
    item = {"instance_type": "1H100.80S.30V", "currency": "usd", "price_per_hour": "3.25",
            "spot_price": None, "gpu": {"description": "1x H100 SXM5 80GB", "number_of_gpus": 1}}
    offers = list(spider.parse(json_response(INSTANCE_TYPES_URL, [item])))
    assert [o["offer_kind"] for o in offers] == ["on_demand"]


def test_an_error_body_is_a_loud_error():
    with pytest.raises(ValueError, match="expected a list of instance types"):
        list(spider.parse(json_response(INSTANCE_TYPES_URL, {"code": "unauthorized_request"})))


def test_contract(offers):
    check_contract("datacrunch", offers)
