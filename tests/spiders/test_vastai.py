"""vast.ai bundles search: parse the recorded response once, check many small things."""

import functools
import json
from decimal import Decimal

import pytest
from scrapy.utils.test import get_crawler

from pipelines.normalize import Quarantined, normalize_offer
from spiders.parsing import CARDS_BY_FAMILY, gpu_family, parse_gpu
from spiders.parsing.machine import machine_specs
from spiders.parsing.regions import NO_LOCATION
from spiders.vendors.vastai import API_URL, QUERY, VAST_GPU_NAMES, VastaiSpider
from tests.helpers.responses import file_response, snapshot_entries

crawler = get_crawler(VastaiSpider)
spider = VastaiSpider.from_crawler(crawler, crawl_id="test")


@functools.cache
def parsed() -> list[dict]:
    """The offers of the recorded search answer, parsed once."""
    return list(spider.parse(file_response("vastai", "bundles.json")))


@pytest.fixture(scope="module")
def response():
    return file_response("vastai", "bundles.json")


@pytest.fixture(scope="module")
def listings(response) -> list[dict]:
    return response.json()["offers"]


@pytest.fixture(scope="module")
def offers() -> list[dict]:
    return parsed()


@pytest.fixture(scope="module")
def by_key(offers) -> dict[tuple, dict]:
    return {(o["sku"], o["offer_kind"]): o for o in offers}


def test_request_is_the_recorded_post_search():
    entry = snapshot_entries("vastai")[0]
    assert entry["method"] == "POST" and entry["url"] == API_URL
    assert entry["body"] == json.loads(json.dumps(QUERY))
    assert QUERY["rentable"] == {"eq": True} and QUERY["rented"] == {"eq": False}


def test_the_search_asks_for_every_catalog_card_not_only_the_mission_ones():
    assert set(VAST_GPU_NAMES) == set(CARDS_BY_FAMILY)   # a new catalog row needs a spelling here
    asked = QUERY["gpu_name"]["in"]
    assert {"A800 PCIE", "H20", "H200", "L40S", "Tesla V100", "RTX 3090", "RTX 4090D",
            "RTX 5090", "MI300X"} <= set(asked)
    assert len(asked) == len(set(asked))


@pytest.mark.parametrize("family, name", [(f, n) for f, names in VAST_GPU_NAMES.items()
                                          for n in names])
def test_every_vast_spelling_normalizes_to_its_own_family(family, name):
    assert gpu_family(parse_gpu(name).gpu_model) == family


def test_one_on_demand_and_one_spot_offer_per_listing(offers, listings):
    assert len(listings) == 26
    assert len(offers) == 2 * len(listings) == 52


def test_listing_without_geolocation_is_kept_counted_and_quarantined_with_the_reason(offers,
                                                                                     listings):
    hidden = [x for x in listings if x["geolocation"] is None]
    assert [x["id"] for x in hidden] == [14181136]
    unplaced = [o for o in offers if o["sku"] == "14181136"]
    assert {o["offer_kind"] for o in unplaced} == {"on_demand", "spot"}
    assert {o["region_text"] for o in unplaced} == {NO_LOCATION}
    assert crawler.stats.get_value("vastai/offers_without_location") == 1
    for offer in unplaced:
        with pytest.raises(Quarantined) as caught:
            normalize_offer(offer)
        assert caught.value.stage == "region" and NO_LOCATION in caught.value.reason


@pytest.mark.parametrize("geolocation", [None, "", " , "])
def test_every_empty_geolocation_is_unplaced(geolocation, listings, response):
    listing = {**listings[0], "geolocation": geolocation}
    fresh = VastaiSpider.from_crawler(get_crawler(VastaiSpider), crawl_id="test")
    assert {o["region_text"] for o in fresh.parse_offer(listing, response)} == {NO_LOCATION}
    assert fresh.crawler.stats.get_value("vastai/offers_without_location") == 1


def test_on_demand_offer_fields(by_key):
    o = by_key["13987402", "on_demand"]
    assert o["gpu_text"] == "H100 SXM"
    assert o["gpu_count"] == 1
    assert (o["vram"], o["vram_unit"]) == (81559, "MB")   # as served: 79.65 GB
    assert o["region_text"] == "Texas, US"
    assert o["price_amount"] == "1.87"
    assert (o["currency"], o["billing_period"], o["available"]) == ("USD", "hour", True)
    assert o["url"] == API_URL


def test_spot_offer_is_the_min_bid(by_key):
    o = by_key["13987402", "spot"]
    assert o["price_amount"] == "1.2"
    assert o["offer_kind"] == "spot"


def test_whole_machine_price_with_its_gpu_count(by_key):
    o = by_key["13902188", "on_demand"]
    assert (o["gpu_count"], o["price_amount"], o["region_text"]) == (8, "16.0", "Vietnam, VN")
    row = normalize_offer(o)
    assert row["price_per_gpu_hour_usd"] == Decimal("2.000000")


def test_48gb_4090_mod_in_hong_kong_is_its_own_card(by_key):
    o = by_key["14190047", "on_demand"]
    assert (o["gpu_text"], o["vram"], o["region_text"]) == ("RTX 4090", 49140, "Hong Kong, HK")
    row = normalize_offer(o)
    assert row["gpu_model"] == "RTX4090-48GB"
    assert (row["country"], row["city"]) == ("HK", "Hong Kong")
    stock = normalize_offer(by_key["14188902", "on_demand"])
    assert stock["gpu_model"] == "RTX4090-24GB"


def test_country_only_geolocation(by_key):
    o = by_key["13874420", "on_demand"]
    assert o["region_text"] == ", US"
    row = normalize_offer(o)
    assert (row["country"], row["province_or_state"]) == ("US", None)


def test_state_geolocation_resolves_the_state(by_key):
    row = normalize_offer(by_key["14099418", "on_demand"])
    assert (row["gpu_model"], row["gpu_variant"]) == ("A100-80GB", "PCIe")
    assert (row["region_code"], row["country"], row["province_or_state"]) == (
        "oklahoma, us", "US", "Oklahoma")


def test_every_us_state_geolocation_in_the_snapshot_gets_its_state(offers):
    us = [o for o in offers if o["region_text"].endswith(", US") and o["region_text"] != ", US"
          and not o["region_text"].startswith("United States")]
    assert len(us) >= 10
    assert all(normalize_offer(o)["province_or_state"] == o["region_text"].split(",")[0]
               for o in us)


def test_vendor_data_keeps_the_total_and_host_type(by_key):
    o = by_key["13987402", "on_demand"]
    assert o["vendor_data"]["dph_total"] == pytest.approx(1.87 + 100 * 0.15 / 730, abs=1e-6)
    assert "hosting_type" in o["vendor_data"] and "datacenter" not in o["vendor_data"]


def test_whole_host_listing_states_vcpus_memory_and_disk(by_key):
    # 13902188: 8 cards, cpu_cores_effective == cpu_cores (32): the whole host, cpu_ram its RAM
    for kind in ("on_demand", "spot"):
        o = by_key["13902188", kind]
        assert (o["vcpus"], o["memory"], o["memory_unit"], o["disk"], o["disk_unit"]) == (
            32.0, 65536, "MB", 500.0, "GB")
        assert machine_specs(o) == {"vcpus": 32, "memory_gib": 64, "disk_gb": 500}


def test_part_of_a_host_states_its_vcpus_and_disk_but_not_the_hosts_memory(by_key):
    # 13987402: 16 of the host's 32 vCPUs; its share of cpu_ram is not stated
    o = by_key["13987402", "on_demand"]
    assert "memory" not in o
    assert machine_specs(o) == {"vcpus": 16, "memory_gib": None, "disk_gb": 100}


@pytest.mark.parametrize("fields, memory_gib", [
    ({"gpu_frac": 1.0, "cpu_cores_effective": 16.0}, 64),   # gpu_frac says whole, first
    ({"gpu_frac": 0.5, "cpu_cores_effective": 32.0}, None),
    ({"cpu_cores": None, "cpu_cores_effective": None}, None),
])
def test_memory_is_the_offers_only_for_the_whole_host(fields, memory_gib, listings, response):
    [on_demand, _] = spider.parse_offer({**listings[0], **fields}, response)
    assert machine_specs(on_demand)["memory_gib"] == memory_gib


def test_listing_without_machine_fields_states_none(listings, response):
    bare = {k: v for k, v in listings[0].items()
            if k not in ("cpu_cores", "cpu_cores_effective", "cpu_ram", "disk_space")}
    [on_demand, _] = spider.parse_offer(bare, response)
    assert not {"vcpus", "memory", "disk"} & set(on_demand)
    assert machine_specs(on_demand) == {"vcpus": None, "memory_gib": None, "disk_gb": None}


def test_every_offer_is_a_queried_card_rented_whole(offers):
    for offer in offers:
        assert offer["offer_kind"] in ("on_demand", "spot")
        assert offer["gpu_text"] in QUERY["gpu_name"]["in"]
        if offer["region_text"] != NO_LOCATION:
            assert normalize_offer(offer)["gpu_fraction"] == 1


def test_spot_never_above_on_demand(by_key):
    for sku, kind in by_key:
        if kind == "spot":
            assert Decimal(by_key[sku, "spot"]["price_amount"]) < Decimal(
                by_key[sku, "on_demand"]["price_amount"])

