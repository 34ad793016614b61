"""RunPod GraphQL: parse the recorded response once, check many small things."""

from decimal import Decimal

import pytest

from pipelines.lib.normalize import normalize_offer
from spiders.vendors.runpod import API_URL, BODY, DATACENTERS, RunpodSpider
from tests.conftest import file_response, snapshot_entries

spider = RunpodSpider(crawl_id="test")
RESPONSE = file_response("runpod", "graphql_gpu_prices.json")
OFFERS = list(spider.parse(RESPONSE))
BY_KEY = {(o["sku"], o["region_text"]): o for o in OFFERS}


def test_request_is_the_recorded_graphql_post():
    entry = snapshot_entries("runpod")[0]
    assert (entry["method"], entry["url"]) == ("POST", API_URL)
    assert entry["body"] == BODY
    assert "oneMonthPrice" in BODY["query"] and "gpuAvailability" in BODY["query"]
    assert BODY["variables"] == {"lowestPriceInput": {"gpuCount": 1}}


def test_offer_count():
    # A100 PCIe 3 DCs x 6 prices, A100 SXM 2 x 6, H100 SXM 3 x 6, H100 PCIe 2 x 6,
    # H100 NVL 1 x 4 (no 3/6-month rate), RTX 4090 5 x 3 (no commitments)
    assert len(OFFERS) == 18 + 12 + 18 + 12 + 4 + 15 == 79


def test_secure_price_from_the_catalog():
    o = BY_KEY["NVIDIA A100 80GB PCIe | secure", "US-GA-1"]
    assert o["gpu_text"] == "A100 PCIe" and o["vram_gb"] == 80
    assert (o["offer_kind"], o["price_amount"], o["currency"]) == ("on_demand", "1.39", "USD")
    assert o["billing_period"] == "hour" and o["gpu_count"] == 1
    assert o["available"] is True and o["vendor_data"]["stockStatus"] == "High"
    assert BY_KEY["NVIDIA GeForce RTX 4090 | secure", "AP-JP-1"]["price_amount"] == "0.74"


def test_community_price_is_on_demand_with_community_in_the_sku():
    o = BY_KEY["NVIDIA GeForce RTX 4090 | community", "EU-RO-1"]
    assert (o["offer_kind"], o["price_amount"]) == ("on_demand", "0.44")


def test_spot_is_the_minimum_bid():
    o = BY_KEY["NVIDIA H100 80GB HBM3 | spot", "US-TX-3"]
    assert (o["offer_kind"], o["price_amount"]) == ("spot", "1.75")
    assert o["vendor_data"]["field"] == "minimumBidPrice"


def test_month_commitments_are_hourly_reserved_rates():
    rates = {o["sku"].split(" | ")[1]: (o["offer_kind"], o["billing_period"], o["price_amount"])
             for o in OFFERS if o["region_text"] == "US-TX-3" and "HBM3" in o["sku"]}
    assert rates == {"secure": ("on_demand", "hour", "2.69"),
                     "community": ("on_demand", "hour", "2.39"),
                     "spot": ("spot", "hour", "1.75"),
                     "reserved 1 month": ("reserved", "hour", "2.49"),
                     "reserved 3 months": ("reserved", "hour", "2.39"),
                     "reserved 6 months": ("reserved", "hour", "2.29")}


def test_null_commitment_prices_yield_no_offer():
    assert not [o for o in OFFERS if "4090" in o["sku"] and o["offer_kind"] == "reserved"]
    nvl = {o["sku"] for o in OFFERS if "NVL" in o["sku"]}
    assert nvl == {"NVIDIA H100 NVL | secure", "NVIDIA H100 NVL | community",
                   "NVIDIA H100 NVL | spot", "NVIDIA H100 NVL | reserved 1 month"}


def test_sold_out_datacenter_keeps_its_price_as_unavailable():
    sold_out = {(o["sku"].split(" | ")[0], o["region_text"]) for o in OFFERS if not o["available"]}
    assert sold_out == {("NVIDIA GeForce RTX 4090", "US-GA-1"),
                        ("NVIDIA A100-SXM4-80GB", "EU-SE-1")}


def test_only_listed_datacenters_and_tracked_gpus():
    assert {o["region_text"] for o in OFFERS} == set(DATACENTERS)
    assert not any("EU-NL-1" == o["region_text"] or "A6000" in o["sku"] for o in OFFERS)
    # H100 SXM is listed in US-TX-3, EU-RO-1, AP-JP-1 only
    assert {o["region_text"] for o in OFFERS if "HBM3" in o["sku"]} == {"US-TX-3", "EU-RO-1",
                                                                         "AP-JP-1"}


def test_display_names_normalize_to_the_right_card():
    cards = {o["vendor_data"]["gpuTypeId"]: normalize_offer(o) for o in OFFERS}
    assert {k: (r["gpu_model"], r["gpu_variant"]) for k, r in cards.items()} == {
        "NVIDIA A100 80GB PCIe": ("A100-80GB", "PCIe"),
        "NVIDIA A100-SXM4-80GB": ("A100-80GB", "SXM"),
        "NVIDIA H100 80GB HBM3": ("H100-80GB", "SXM"),
        "NVIDIA H100 PCIe": ("H100-80GB", "PCIe"),
        "NVIDIA H100 NVL": ("H100-94GB", "NVL"),
        "NVIDIA GeForce RTX 4090": ("RTX4090-24GB", None),
    }


def test_datacenter_ids_resolve():
    row = normalize_offer(BY_KEY["NVIDIA A100 80GB PCIe | secure", "CA-MTL-1"])
    assert (row["country"], row["province_or_state"], row["city"]) == ("CA", "Quebec", "Montreal")


def test_error_body_fails_loudly():
    broken = RESPONSE.replace(body=b'{"errors": [{"message": "Cannot query field"}], "data": null}')
    with pytest.raises(ValueError, match="runpod: no gpuTypes/dataCenters"):
        list(spider.parse(broken))


@pytest.mark.parametrize("offer", OFFERS, ids=lambda o: f"{o['sku']}-{o['region_text']}")
def test_offer_invariants(offer):
    assert Decimal(offer["price_amount"]) > 0
    assert offer["gpu_count"] == 1 and offer["billing_period"] == "hour"
    assert offer["region_text"] in DATACENTERS
    assert normalize_offer(offer)["price_per_gpu_hour_usd"] == Decimal(offer["price_amount"])


def test_offers_are_unique():
    keys = [(o["sku"], o["region_text"]) for o in OFFERS]
    assert len(keys) == len(set(keys))
