"""Nebius: the public price list. The snapshot is a trim of a public collector's real copy of
nebius.com/prices (ewyluda/gpu-price-index tests/fixtures/nebius.html @ eb72cc64); what is
Nebius's own: the GPU-hour column in force on the fetch day, "Contact us" rows, range machines."""

from datetime import date
from decimal import Decimal

import pytest
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from pipelines.normalize import Quarantined, normalize_offer
from spiders.vendors.nebius import PRICES_URL, NebiusSpider, machine, price_column
from tests.helpers.responses import file_response
from tests.helpers.spider_contract import check_contract

crawler = get_crawler(NebiusSpider)
spider = NebiusSpider.from_crawler(crawler, crawl_id="test")
HEADER = ["Item", "vCPUs", "RAM, GB", "On-demand, GPU-hour",
          "GPU-hour (Effective October 1, 2026)", "GPU-hour (Effective January 1, 2027)"]


@pytest.fixture(scope="module")
def offers() -> list[dict]:
    return list(spider.parse(file_response("nebius", "prices.html")))


@pytest.fixture(scope="module")
def by_sku(offers) -> dict[str, dict]:
    return {o["sku"]: o for o in offers}


def test_the_gpu_table_is_read_and_the_rest_skipped_by_reason(offers):
    assert len(offers) == 7
    stats = crawler.stats.get_stats()
    assert stats["offers_skipped/Contact us: no list price"] == 2   # GB300 and GB200 NVL72
    assert stats["offers_skipped/table 'Preemptible NVIDIA GPU Instances' is not read"] == 1
    assert stats["offers_skipped/table 'CPU-only instances' is not read"] == 1


@pytest.mark.parametrize("sku, model, usd", [
    ("NVIDIA HGX H100", "H100-80GB", "4.50"),
    ("NVIDIA HGX H200", "H200-141GB", "5.40"),
    ("NVIDIA HGX B200", "B200-180GB", "8.50"),
    ("NVIDIA HGX B300", "B300-270GB", "9.50"),
    ("NVIDIA L40S with Intel CPU", "L40S-48GB", "1.55"),   # "from $1.55": a starting price
])
def test_the_announced_column_in_force_is_read_with_its_date(by_sku, sku, model, usd):
    offer = by_sku[sku]
    assert offer["effective_at"] == "2026-10-01"
    assert offer["vendor_data"]["price_column"] == "GPU-hour (Effective October 1, 2026)"
    row = normalize_offer(offer)
    assert (row["gpu_model"], row["price_per_gpu_hour_usd"]) == (model, Decimal(usd))
    assert (row["country"], row["observed_at"].date()) == ("FI", date(2026, 10, 1))


@pytest.mark.parametrize("today, index, effective", [
    (date(2026, 9, 30), 3, None),               # before any announced change: the standing one
    (date(2026, 10, 1), 4, "2026-10-01"),
    (date(2026, 12, 31), 4, "2026-10-01"),
    (date(2027, 1, 1), 5, "2027-01-01"),       # the latest change whose date has come
])
def test_the_column_in_force_on_the_fetch_day(today, index, effective):
    assert price_column(HEADER, today) == (index, effective)


def test_a_header_without_a_gpu_hour_column_is_a_loud_error():
    with pytest.raises(ValueError, match="no 'GPU-hour' price column"):
        price_column(["Item", "Price per hour"], date(2026, 10, 1))


def test_a_page_without_the_gpu_table_is_a_loud_error():
    page = HtmlResponse(url=PRICES_URL, body=b"<html><body>Log in</body></html>", encoding="utf-8")
    with pytest.raises(ValueError, match="no 'NVIDIA GPU Instances' table"):
        list(spider.parse(page))


@pytest.mark.parametrize("row, said", [
    ({"vCPUs": "16", "RAM, GB": "200"}, {"vcpus_text": "16", "memory_text": "200 GB"}),
    ({"vCPUs": "8-40", "RAM, GB": "32-160"}, {}),      # a configurable instance: no one machine
    ({}, {}),
])
def test_the_machine_is_one_gpus_instance_with_the_headers_unit(row, said):
    assert machine(row) == said


def test_a_card_the_catalog_lacks_is_quarantined_with_the_reason(by_sku):
    with pytest.raises(Quarantined, match="unknown GPU model"):
        normalize_offer(by_sku["NVIDIA RTX PRO 6000"])


def test_contract(offers):
    check_contract("nebius", offers)
