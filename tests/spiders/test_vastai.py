"""vast.ai bundles search: parse the recorded response once, check many small things."""

import json
from decimal import Decimal

import pytest

from pipelines.lib.normalize import normalize_offer
from spiders.vendors.vastai import API_URL, QUERY, VastaiSpider
from tests.conftest import file_response, snapshot_entries

spider = VastaiSpider(crawl_id="test")
RESPONSE = file_response("vastai", "bundles.json")
LISTINGS = RESPONSE.json()["offers"]
OFFERS = list(spider.parse(RESPONSE))
BY_KEY = {(o["sku"], o["offer_kind"]): o for o in OFFERS}


def test_request_is_the_recorded_post_search():
    entry = snapshot_entries("vastai")[0]
    assert entry["method"] == "POST" and entry["url"] == API_URL
    assert entry["body"] == json.loads(json.dumps(QUERY))
    assert QUERY["gpu_name"]["in"] == ["RTX 4090", "A100 PCIE", "A100 SXM4", "H100 SXM",
                                       "H100 PCIE", "H100 NVL"]
    assert QUERY["rentable"] == {"eq": True} and QUERY["rented"] == {"eq": False}


def test_one_on_demand_and_one_spot_offer_per_located_listing():
    located = [x for x in LISTINGS if x["geolocation"]]
    assert len(located) == len(LISTINGS) - 1 == 25
    assert len(OFFERS) == 2 * len(located) == 50


def test_listing_without_geolocation_is_skipped():
    hidden = [x for x in LISTINGS if x["geolocation"] is None]
    assert [x["id"] for x in hidden] == [14181136]
    assert not any(o["sku"] == "14181136" for o in OFFERS)


def test_on_demand_offer_fields():
    o = BY_KEY["13987402", "on_demand"]
    assert o["gpu_text"] == "H100 SXM"
    assert o["gpu_count"] == 1
    assert o["vram_gb"] == 79.65
    assert o["region_text"] == "Texas, US"
    assert o["price_amount"] == "1.87"
    assert o["price_text"] == "$1.87/hr"
    assert (o["currency"], o["billing_period"], o["available"]) == ("USD", "hour", True)
    assert o["vendor"] == "vast.ai" and o["vendor_kind"] == "marketplace"
    assert o["observed_at"] == "2026-11-30T09:00:00Z"
    assert o["url"] == API_URL


def test_spot_offer_is_the_min_bid():
    o = BY_KEY["13987402", "spot"]
    assert o["price_amount"] == "1.2"
    assert o["offer_kind"] == "spot"


def test_whole_machine_price_with_its_gpu_count():
    o = BY_KEY["13902188", "on_demand"]
    assert (o["gpu_count"], o["price_amount"], o["region_text"]) == (8, "16.0", "Vietnam, VN")
    row = normalize_offer(o)
    assert row["price_per_gpu_hour_usd"] == Decimal("2.000000")


def test_48gb_4090_mod_in_hong_kong_is_its_own_card():
    o = BY_KEY["14190047", "on_demand"]
    assert (o["gpu_text"], o["vram_gb"], o["region_text"]) == ("RTX 4090", 47.99, "Hong Kong, HK")
    row = normalize_offer(o)
    assert row["gpu_model"] == "RTX4090-48GB"
    assert (row["country"], row["city"]) == ("HK", "Hong Kong")
    stock = normalize_offer(BY_KEY["14188902", "on_demand"])
    assert stock["gpu_model"] == "RTX4090-24GB"


def test_country_only_geolocation():
    o = BY_KEY["13874420", "on_demand"]
    assert o["region_text"] == ", US"
    row = normalize_offer(o)
    assert (row["country"], row["province_or_state"]) == ("US", None)


def test_state_geolocation_resolves_the_country_and_keeps_the_text():
    # regions.csv has no vast state rows ("Texas, US" -> US only, see tests/parsing/test_regions)
    row = normalize_offer(BY_KEY["14099418", "on_demand"])
    assert (row["gpu_model"], row["gpu_variant"]) == ("A100-80GB", "PCIe")
    assert (row["region_code"], row["country"]) == ("oklahoma, us", "US")


def test_vendor_data_keeps_the_total_and_host_type():
    o = BY_KEY["13987402", "on_demand"]
    assert o["vendor_data"]["dph_total"] == pytest.approx(1.87 + 100 * 0.15 / 730, abs=1e-6)
    assert o["vendor_data"]["datacenter"] is True


@pytest.mark.parametrize("offer", OFFERS, ids=lambda o: f"{o['sku']}-{o['offer_kind']}")
def test_offer_invariants(offer):
    assert Decimal(offer["price_amount"]) > 0
    assert offer["offer_kind"] in ("on_demand", "spot")
    assert offer["gpu_text"] in QUERY["gpu_name"]["in"]
    assert len(offer["raw_ref"]) == 64
    row = normalize_offer(offer)
    assert row["gpu_fraction"] == 1


def test_spot_never_above_on_demand():
    for sku, kind in BY_KEY:
        if kind == "spot":
            assert Decimal(BY_KEY[sku, "spot"]["price_amount"]) < Decimal(
                BY_KEY[sku, "on_demand"]["price_amount"])


def test_offers_are_unique():
    keys = [(o["sku"], o["offer_kind"]) for o in OFFERS]
    assert len(keys) == len(set(keys))
