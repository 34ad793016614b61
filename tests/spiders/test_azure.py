"""Azure Retail Prices API: parse the recorded pages (city-scrapers style: parse once, many
checks)."""

from decimal import Decimal

import pytest
from scrapy.utils.test import get_crawler

from pipelines.normalize import Quarantined, normalize_offer
from spiders.vendors.azure import API_URL, UNMAPPED_COUNT, AzureSpider
from tests.helpers.responses import file_response

spider = AzureSpider.from_crawler(get_crawler(AzureSpider), crawl_id="test")


@pytest.fixture(scope="module")
def page1():
    return file_response("azure", "retail_prices_page1.json")


@pytest.fixture(scope="module")
def parsed() -> list:
    """What the spider yields for the recorded first page (offers and the next-page request)."""
    return list(spider.parse(file_response("azure", "retail_prices_page1.json")))


@pytest.fixture(scope="module")
def offers(parsed) -> list[dict]:
    return [o for o in parsed if not hasattr(o, "callback")]


@pytest.fixture(scope="module")
def next_requests(parsed) -> list:
    return [r for r in parsed if hasattr(r, "callback")]


def test_follows_next_page_link(next_requests):
    assert len(next_requests) == 1
    assert next_requests[0].url.startswith("https://prices.azure.com/api/retail/prices?")
    assert "skip=100" in next_requests[0].url


def test_drops_windows_and_low_priority_meters(offers, page1):
    page_items = page1.json()["Items"]
    dropped = [i for i in page_items
               if "Windows" in i["productName"] or "Low Priority" in i["skuName"]]
    assert dropped, "the snapshot should hold meters the spider must drop"
    assert len(offers) == len(page_items) - len(dropped)
    assert not any("Windows" in str(o["vendor_data"]) for o in offers)


def test_first_offer_fields(offers):
    first = offers[0]
    assert first["sku"] == "Standard_NC24ads_A100_v4"
    assert first["gpu_text"] == "A100 80GB PCIe"
    assert first["gpu_count"] == 1
    assert first["region_text"] == "eastus"
    assert first["offer_kind"] == "on_demand"
    assert Decimal(first["price_amount"]) == Decimal("3.673")
    assert first["currency"] == "USD"
    assert first["billing_period"] == "hour"


def test_spot_meters_become_spot_offers(offers):
    spot = [o for o in offers if o["offer_kind"] == "spot"]
    assert spot and all("Spot" in o["vendor_data"]["skuName"] for o in spot)


def test_eight_gpu_vms_carry_their_gpu_count(offers):
    nd = [o for o in offers if o["sku"] == "Standard_ND96amsr_A100_v4"]
    assert nd and {o["gpu_count"] for o in nd} == {8}


def test_the_request_asks_for_every_gpu_series_azure_rents():
    for token in ("A100", "H100", "H200", "MI300X", "_A10_", "_T4_", "Standard_ND96asr_v4"):
        assert token in API_URL.replace("%27", "'").replace("%2C", ",")


def _meter(arm_sku: str, price: float = 4.2) -> dict:
    return {"armSkuName": arm_sku, "armRegionName": "eastus", "retailPrice": price,
            "currencyCode": "USD", "unitOfMeasure": "1 Hour", "productName": "NV Series",
            "skuName": arm_sku.removeprefix("Standard_"), "meterName": "x"}


@pytest.mark.parametrize("arm_sku, price, model, count, fraction", [
    ("Standard_ND96isr_H200_v5", 84.8, "H200-141GB", 8, "1"),
    ("Standard_ND96isr_MI300X_v5", 48.0, "MI300X-192GB", 8, "1"),
    ("Standard_NC4as_T4_v3", 0.526, "T4-16GB", 1, "1"),
    ("Standard_NC64as_T4_v3", 4.352, "T4-16GB", 4, "1"),
    ("Standard_NV12ads_A10_v5", 0.908, "A10-24GB", 1, Decimal(8) / Decimal(24)),
    ("Standard_NV36adms_A10_v5", 4.52, "A10-24GB", 1, "1"),
    ("Standard_NCC40ads_H100_v5", 6.98, "H100-94GB", 1, "1"),
])
def test_other_gpu_sizes_are_read_not_dropped(arm_sku, price, model, count, fraction, page1):
    [offer] = spider.parse_offer(_meter(arm_sku, price), page1)
    row = normalize_offer(offer)
    assert (row["gpu_model"], row["gpu_count"]) == (model, count)
    assert row["gpu_fraction"] == Decimal(fraction)


def test_unmapped_size_goes_to_quarantine_with_the_reason_and_is_counted(page1):
    fresh = AzureSpider.from_crawler(get_crawler(AzureSpider), crawl_id="test")
    [offer] = fresh.parse_offer(_meter("Standard_ND192isr_H100_v6", 120.0), page1)
    assert (offer["gpu_text"], offer["gpu_count"]) == ("Standard_ND192isr_H100_v6", UNMAPPED_COUNT)
    assert fresh.crawler.stats.get_value("azure/unmapped_gpu_skus") == 1
    with pytest.raises(Quarantined, match="Azure VM size not in GPU_SKUS") as caught:
        normalize_offer(offer)
    assert caught.value.stage == "card"
