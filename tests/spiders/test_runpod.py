"""RunPod GraphQL, on the shape gpuhunt reads without a key: places first, then prices per place.

The recorded responses are parsed once; many small tests follow.
"""

import json
import shutil
from decimal import Decimal

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from pipelines.normalize import normalize_offer
from spiders.layout import SNAPSHOT_DIR
from spiders.parsing.machine import machine_specs
from spiders.replay_server import ReplayServer
from spiders.vendors.runpod import API_URL, PLACES_QUERY, RunpodSpider, prices_body
from tests.helpers.crawl import run_crawl
from tests.helpers.responses import file_response, snapshot_entries

crawler = get_crawler(RunpodSpider)
spider = RunpodSpider.from_crawler(crawler, crawl_id="test")


def _prices(request: Request) -> list:
    """Parse the recorded answer to a follow-up request, as Scrapy would call it back."""
    body = json.loads(request.body)
    place = body["variables"]["lowestPriceInput"]
    cloud = "secure" if place["secureCloud"] else "community"
    name = f"prices_{cloud}_{place.get('dataCenterId') or place.get('countryCode')}.json"
    return list(request.callback(file_response("runpod", name), **request.cb_kwargs))


@pytest.fixture(scope="module")
def places_response():
    return file_response("runpod", "places.json")


@pytest.fixture(scope="module")
def price_files() -> dict[str, dict]:
    return {e["file"]: e for e in snapshot_entries("runpod") if e["file"] != "places.json"}


@pytest.fixture(scope="module")
def follow_ups(places_response) -> list[Request]:
    """The follow-up requests of the recorded places answer."""
    return list(spider.parse_places(places_response))


@pytest.fixture(scope="module")
def offers(follow_ups) -> list[dict]:
    """The offers of the follow-ups' recorded answers."""
    return [offer for request in follow_ups for offer in _prices(request)]


@pytest.fixture(scope="module")
def by_key(offers) -> dict[tuple, dict]:
    return {(o["sku"], o["region_text"]): o for o in offers}


def test_places_request_is_the_recorded_keyless_query():
    entry = snapshot_entries("runpod")[0]
    assert (entry["method"], entry["url"], entry["file"]) == ("POST", API_URL, "places.json")
    assert entry["body"] == {"query": PLACES_QUERY}
    assert "gpuAvailability" not in PLACES_QUERY and "listed" in PLACES_QUERY


def test_one_price_request_per_listed_datacenter_and_country(follow_ups):
    places = [json.loads(r.body)["variables"]["lowestPriceInput"] for r in follow_ups]
    secure = [p["dataCenterId"] for p in places if p["secureCloud"]]
    community = [p["countryCode"] for p in places if not p["secureCloud"]]
    assert secure == ["US-TX-3", "US-GA-1", "EU-RO-1", "EU-SE-1", "CA-MTL-1", "AP-JP-1"]
    assert "US-KS-1" not in secure                  # listed: false
    assert community == ["CA", "CZ", "FR", "US"]    # the null country code is skipped
    assert all(p["gpuCount"] == 1 for p in places)


def test_every_follow_up_is_a_recorded_request(follow_ups, price_files):
    recorded = [json.dumps(e["body"], sort_keys=True) for e in price_files.values()]
    sent = [json.dumps(json.loads(r.body), sort_keys=True) for r in follow_ups]
    assert sorted(sent) == sorted(recorded)
    assert {r.url for r in follow_ups} == {API_URL} and {r.method for r in follow_ups} == {"POST"}


def test_offer_count(offers):
    # secure on-demand 5+2+4+1+4+2, savings plans 6+4+4+2+4+2, community 2+1+2+4
    assert len(offers) == 18 + 22 + 9 == 49


# The record the snapshot's prices are: tgarg01/silybench-data derived/cost.json @ 045df3bf56b8
# (runpod.io/pricing, checked_at 2026-09-25): A100 PCIe secure 1.59, RTX 4090 0.74 / 0.34, H100
# SXM 3.49 / 2.69.
def test_secure_price_at_a_datacenter_offering_the_card(by_key):
    o = by_key["NVIDIA A100 80GB PCIe | secure", "US-GA-1"]
    assert o["gpu_text"] == "A100 PCIe" and o["vram_gb"] == 80
    assert (o["offer_kind"], o["price_amount"], o["currency"]) == ("on_demand", "1.59", "USD")
    assert (o["price_basis"], o["prices_as_of"]) == ("mixed", "2026-09-25")   # its entry's
    assert o["billing_period"] == "hour" and o["gpu_count"] == 1 and o["available"] is True
    assert o["vendor_data"]["stockStatus"] == "High" and o["vendor_data"]["field"] == "securePrice"
    assert by_key["NVIDIA GeForce RTX 4090 | secure", "AP-JP-1"]["price_amount"] == "0.74"


def test_community_price_is_placed_by_country(offers, by_key):
    o = by_key["NVIDIA GeForce RTX 4090 | community", "CZ"]
    assert (o["offer_kind"], o["price_amount"]) == ("on_demand", "0.34")
    row = normalize_offer(o)
    assert (row["country"], row["province_or_state"]) == ("CZ", None)
    assert not any(o["sku"].endswith("| community") and "-" in o["region_text"] for o in offers)


def test_card_not_in_stock_at_a_place_yields_no_offer(offers, by_key):
    # US-GA-1 answers the RTX 4090 with stockStatus null; EU-SE-1 the A100 SXM
    assert ("NVIDIA GeForce RTX 4090 | secure", "US-GA-1") not in by_key
    assert ("NVIDIA A100-SXM4-80GB | secure", "EU-SE-1") not in by_key
    assert {o["available"] for o in offers} == {True}


def test_savings_plans_are_hourly_reserved_rates_below_on_demand(offers):
    rates = {o["sku"].split(" | ")[1]: (o["offer_kind"], o["billing_period"], o["price_amount"])
             for o in offers if o["region_text"] == "US-TX-3" and "HBM3" in o["sku"]}
    assert rates == {"secure": ("on_demand", "hour", "3.49"),
                     "savings plan 3 months": ("reserved", "hour", "2.39"),
                     "savings plan 6 months": ("reserved", "hour", "2.29")}


def test_savings_plan_rate_not_below_on_demand_is_refused_and_counted(offers):
    # RTX A6000 carries the docs' "in stock" example values 500 / 900 at US-TX-3 and CA-MTL-1
    assert not [o for o in offers if "A6000" in o["sku"] and o["offer_kind"] == "reserved"]
    assert crawler.stats.get_value("runpod/savings_plan_rate_not_hourly") == 4


def test_no_spot_and_no_plans_without_rates(offers):
    assert not [o for o in offers if o["offer_kind"] == "spot"]
    nvl = {o["sku"] for o in offers if "NVL" in o["sku"]}
    assert nvl == {"NVIDIA H100 NVL | secure"}


def test_display_names_normalize_to_the_right_card(offers):
    # every GPU type RunPod lists, the mission cards and the others (RTX A6000, L40S)
    cards = {o["vendor_data"]["gpuTypeId"]: normalize_offer(o) for o in offers}
    assert {k: (r["gpu_model"], r["gpu_variant"]) for k, r in cards.items()} == {
        "NVIDIA A100 80GB PCIe": ("A100-80GB", "PCIe"),
        "NVIDIA A100-SXM4-80GB": ("A100-80GB", "SXM"),
        "NVIDIA H100 80GB HBM3": ("H100-80GB", "SXM"),
        "NVIDIA H100 PCIe": ("H100-80GB", "PCIe"),
        "NVIDIA H100 NVL": ("H100-94GB", "NVL"),
        "NVIDIA GeForce RTX 4090": ("RTX4090-24GB", None),
        "NVIDIA RTX A6000": ("RTXA6000-48GB", None),
        "NVIDIA L40S": ("L40S-48GB", None),
    }


@pytest.mark.parametrize("sku, place, vcpus, memory_gib", [
    ("NVIDIA H100 80GB HBM3 | secure", "US-TX-3", 20, 125),
    ("NVIDIA H100 80GB HBM3 | savings plan 6 months", "US-TX-3", 20, 125),   # the same pod
    ("NVIDIA GeForce RTX 4090 | community", "CZ", 6, 41),
])
def test_offer_states_its_one_gpu_pods_vcpus_and_memory(sku, place, vcpus, memory_gib, by_key):
    o = by_key[sku, place]
    assert (o["vcpus"], o["memory"], o["memory_unit"]) == (vcpus, memory_gib, "GB")
    assert machine_specs(o) == {"vcpus": vcpus, "memory_gib": memory_gib, "disk_gb": None}


def test_offer_without_min_vcpu_and_memory_states_none():
    response = file_response("runpod", "prices_secure_US-TX-3.json")
    gpu = {**response.json()["data"]["gpuTypes"][1]}
    gpu["lowestPrice"] = {**gpu["lowestPrice"], "minVcpu": None, "minMemory": None}
    [on_demand, *_] = spider.parse_offer(gpu, response, place="US-TX-3", secure=True)
    assert not {"vcpus", "memory", "memory_unit"} & set(on_demand)
    assert machine_specs(on_demand) == {"vcpus": None, "memory_gib": None, "disk_gb": None}


def test_datacenter_ids_resolve(by_key):
    row = normalize_offer(by_key["NVIDIA A100 80GB PCIe | secure", "CA-MTL-1"])
    assert (row["country"], row["province_or_state"], row["city"]) == ("CA", "Quebec", "Montreal")


@pytest.mark.parametrize("body, step", [
    (b'{"errors": [{"message": "Cannot query field"}], "data": null}', "places"),
    (b'{"data": {"dataCenters": [{"id": "US-TX-3", "listed": true}]}}', "places"),
    (b'{"errors": [{"message": "Cannot query field \\"gpuTypes\\""}]}', "prices"),
    (b'{"data": {"gpuTypes": null}}', "prices"),
])
def test_error_or_missing_field_fails_loudly(body, step, places_response):
    if step == "places":
        with pytest.raises(ValueError, match="runpod: no dataCenters/countryCodes"):
            list(spider.parse_places(places_response.replace(body=body)))
    else:
        response = file_response("runpod", "prices_secure_US-TX-3.json").replace(body=body)
        with pytest.raises(ValueError, match="runpod: no gpuTypes"):
            list(spider.parse(response, place="US-TX-3", secure=True))


def test_prices_body_names_the_place_by_cloud():
    assert prices_body(secure=True, place="EU-RO-1")["variables"]["lowestPriceInput"] == {
        "secureCloud": True, "dataCenterId": "EU-RO-1", "gpuCount": 1}
    assert prices_body(secure=False, place="FR")["variables"]["lowestPriceInput"] == {
        "secureCloud": False, "countryCode": "FR", "gpuCount": 1}


def test_every_offer_is_one_card_an_hour_and_reserved_is_below_on_demand(offers, by_key):
    for offer in offers:
        assert offer["gpu_count"] == 1 and offer["billing_period"] == "hour"
        on_demand = by_key.get((offer["sku"].split(" | ")[0] + " | secure", offer["region_text"]))
        if offer["offer_kind"] == "reserved":
            assert Decimal(offer["price_amount"]) < Decimal(on_demand["price_amount"])


def test_every_entry_states_its_provenance():
    for entry in snapshot_entries("runpod"):
        cited = entry["provenance"]["request_from"] + entry["provenance"]["shape_from"]
        assert entry["provenance"]["level"] == "modeled-on-public-format"
        assert all(c["repo"] and c["path"] and len(c["commit"]) == 40 for c in cited)


def test_crawl_replays_both_steps(replay_server, tmp_path, price_files):
    offers, verdict = run_crawl("runpod", replay_server.url, tmp_path)
    assert verdict["passed"], verdict["failures"]
    graphql = [f for f in verdict["fetches"] if f["url"] == API_URL]
    assert len(offers) == 49 and len(graphql) == 1 + len(price_files)


def test_crawl_without_country_codes_fails_its_monitor(tmp_path):
    snapshots = tmp_path / "snapshots"
    shutil.copytree(SNAPSHOT_DIR / "runpod", snapshots / "runpod")
    places = snapshots / "runpod" / "places.json"
    data = json.loads(places.read_text())
    del data["data"]["countryCodes"]
    places.write_text(json.dumps(data))
    with ReplayServer(snapshots) as changed:
        offers, verdict = run_crawl("runpod", changed.url, tmp_path)
    assert offers == [] and not verdict["passed"]
    assert any("runpod: no dataCenters/countryCodes" in f for f in verdict["failures"])
