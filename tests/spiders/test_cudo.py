"""CUDO Compute machine types: one GPU at its GPU component price per machine type and place."""

from decimal import Decimal

import pytest
from scrapy.utils.test import get_crawler

from pipelines.normalize import normalize_offer
from spiders.base.json_api import dig
from spiders.vendors.cudo import MACHINE_TYPES_URL, CudoSpider
from tests.helpers.responses import file_response
from tests.helpers.spider_contract import check_contract


@pytest.fixture(scope="module")
def parsed():
    crawler = get_crawler(CudoSpider)
    spider = CudoSpider.from_crawler(crawler, crawl_id="test")
    return list(spider.parse(file_response("cudo", "machine_types.json"))), crawler.stats


def test_every_gpu_machine_type_is_one_offer_and_meets_the_contract(parsed):
    offers, _ = parsed
    assert len(offers) == 9
    check_contract("cudo", offers)


@pytest.mark.parametrize(("sku", "region", "price", "card"), [
    ("epyc-genoa-a100-pcie:nvidia-a100-pcie", "no-kristiansand-1", "1.5", "A100-40GB"),
    ("sapphire-rapids-h100:nvidia-h100", "no-kristiansand-1", "1.79", "H100-80GB"),
    ("intel-ice-lake-a800-pci:nvidia-a800-pcie", "us-carlsbad-1", "0.8", "A800-80GB"),
    ("intel-sky-lake-v100-32g:nvidia-v100-32g", "us-newyork-1", "0.29", "V100-32GB"),
])
def test_the_gpu_price_is_one_gpus_hour(parsed, sku, region, price, card):
    offer = next(o for o in parsed[0] if (o["sku"], o["region_text"]) == (sku, region))
    assert (offer["price_amount"], offer["gpu_count"]) == (price, 1)
    assert offer["billing_period"] == "hour"
    row = normalize_offer(offer)
    assert (row["gpu_model"], row["price_per_gpu_hour_usd"]) == (card, Decimal(price))
    assert row["prices_as_of"].isoformat() == "2026-03-22"


def test_component_prices_stay_apart_and_availability_is_unknown_without_free_counts(parsed):
    offer = parsed[0][0]
    assert offer["vendor_data"]["vcpu_price_hr"] == "0.004900"
    assert offer["vendor_data"]["memory_gib_price_hr"] == "0.004900"
    assert offer["available"] is None


@pytest.mark.parametrize(("machine", "skipped"), [
    ({"dataCenterId": "us-dallas-1", "machineType": "cpu-only", "gpuModelId": ""},
     "a machine type with no GPU (gpuModelId empty)"),
    ({"dataCenterId": "us-dallas-1", "machineType": "x", "gpuModelId": "nvidia-v100"},
     "a GPU machine type without gpuPriceHr"),
])
def test_machine_types_without_a_gpu_or_a_gpu_price_are_skipped_and_counted(machine, skipped):
    crawler = get_crawler(CudoSpider)
    spider = CudoSpider.from_crawler(crawler, crawl_id="test")
    response = file_response("cudo", "machine_types.json")
    assert list(spider.parse_offer(machine, response)) == []
    assert any(key.endswith(skipped) for key in crawler.stats.get_stats())


def test_free_gpus_say_whether_the_type_is_available():
    spider = CudoSpider.from_crawler(get_crawler(CudoSpider), crawl_id="test")
    response = file_response("cudo", "machine_types.json")
    machine = {"dataCenterId": "us-dallas-1", "machineType": "m", "gpuModelId": "nvidia-v100",
               "gpuPriceHr": {"value": "0.19"}}
    assert [o["available"] for o in spider.parse_offer({**machine, "maxGpuFree": 0}, response)] \
        == [False]
    assert [o["available"] for o in spider.parse_offer({**machine, "maxGpuFree": 4}, response)] \
        == [True]
    assert dig(machine, "gpuPriceHr.value") == "0.19" and response.url == MACHINE_TYPES_URL
