"""Azure Retail Prices API: parse the recorded pages (city-scrapers style: parse once, many checks)."""

from decimal import Decimal

import pytest

from spiders.vendors.azure import AzureSpider
from tests.conftest import file_response

spider = AzureSpider(crawl_id="test")
PAGE1 = file_response("azure", "retail_prices_page1.json")
OUTPUT = list(spider.parse(PAGE1))
OFFERS = [o for o in OUTPUT if not hasattr(o, "callback")]
NEXT = [r for r in OUTPUT if hasattr(r, "callback")]


def test_follows_next_page_link():
    assert len(NEXT) == 1
    assert NEXT[0].url.startswith("https://prices.azure.com/api/retail/prices?")
    assert "skip=100" in NEXT[0].url


def test_drops_windows_and_low_priority_meters():
    page_items = PAGE1.json()["Items"]
    dropped = [i for i in page_items if "Windows" in i["productName"] or "Low Priority" in i["skuName"]]
    assert dropped, "the snapshot should hold meters the spider must drop"
    assert len(OFFERS) == len(page_items) - len(dropped)
    assert not any("Windows" in str(o["vendor_data"]) for o in OFFERS)


def test_first_offer_fields():
    first = OFFERS[0]
    assert first["sku"] == "Standard_NC24ads_A100_v4"
    assert first["gpu_text"] == "A100 80GB PCIe"
    assert first["gpu_count"] == 1
    assert first["region_text"] == "eastus"
    assert first["offer_kind"] == "on_demand"
    assert Decimal(first["price_amount"]) == Decimal("3.673")
    assert first["currency"] == "USD"
    assert first["billing_period"] == "hour"
    assert first["observed_at"] == "2026-11-30T09:00:00Z"


def test_spot_meters_become_spot_offers():
    spot = [o for o in OFFERS if o["offer_kind"] == "spot"]
    assert spot and all("Spot" in o["vendor_data"]["skuName"] for o in spot)


def test_eight_gpu_vms_carry_their_gpu_count():
    nd = [o for o in OFFERS if o["sku"] == "Standard_ND96amsr_A100_v4"]
    assert nd and {o["gpu_count"] for o in nd} == {8}


@pytest.mark.parametrize("offer", OFFERS, ids=lambda o: f"{o['sku']}-{o['region_text']}-{o['offer_kind']}")
def test_offer_invariants(offer):
    assert Decimal(offer["price_amount"]) > 0
    assert offer["url"].startswith("https://prices.azure.com/")
    assert len(offer["raw_ref"]) == 64


def test_offers_are_unique():
    keys = [(o["sku"], o["region_text"], o["offer_kind"]) for o in OFFERS]
    assert len(keys) == len(set(keys))
