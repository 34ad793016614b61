"""Tencent Cloud CVM price-calculator JSON, one recorded body per region (parse once, many checks).
The snapshot holds GN10Xp (V100) instances that normalization keeps as V100-32GB cards, null
prices (monthly-only HCC, no spot) the spider must skip, a sold-out instance and an empty region."""

import functools
import json
from decimal import Decimal

import pytest

from pipelines.normalize import normalize_offer
from spiders.parsing.machine import machine_specs
from spiders.vendors.tencent_cn import REGIONS, TencentCNSpider
from tests.helpers.responses import file_response, snapshot_entries

API_URL = "https://buy.cloud.tencent.com/api/price/cvm/gpu?region={}"
spider = TencentCNSpider(crawl_id="test")


@functools.cache
def parsed() -> dict[str, list[dict]]:
    """{region: the offers of its recorded body}, parsed once (collection needs them too: one
    invariants test per offer)."""
    return {region: list(spider.parse(file_response("tencent_cn", f"gpu_{region}.json")))
            for region in REGIONS}


@pytest.fixture(scope="module")
def by_region() -> dict[str, list[dict]]:
    return parsed()


@pytest.fixture(scope="module")
def offers(by_region) -> list[dict]:
    return [o for offers in by_region.values() for o in offers]


def pytest_generate_tests(metafunc):
    """The tests taking `offer` run once per recorded offer (collection needs the list)."""
    if metafunc.function.__name__ == "test_offer_invariants":
        metafunc.parametrize(
            "offer", [o for offers in parsed().values() for o in offers],
            ids=lambda o: "-".join(o[k] for k in ("sku", "region_text", "offer_kind",
                                                  "billing_period")))


def by(by_region, sku, region):
    return {(o["offer_kind"], o["billing_period"]): o for o in by_region[region] if o["sku"] == sku}


def test_one_request_per_region_each_recorded():
    assert spider.start_urls == [API_URL.format(r) for r in REGIONS]
    assert {e["url"] for e in snapshot_entries("tencent_cn")} == set(spider.start_urls)


def test_offer_count_per_region(offers, by_region):
    assert {r: len(o) for r, o in by_region.items()} == {
        "ap-beijing": 10, "ap-shanghai": 6, "ap-guangzhou": 6, "ap-nanjing": 7, "ap-chengdu": 3,
        "ap-chongqing": 0}
    assert len(offers) == 32


def test_first_offer_fields(offers):
    first = offers[0]
    assert first["sku"] == "GT4.4XLARGE96"
    assert first["gpu_text"] == "NVIDIA A100 40GB"
    assert first["gpu_count"] == 1
    assert first["region_text"] == "ap-beijing"
    assert first["offer_kind"] == "on_demand"
    assert first["billing_period"] == "hour"
    assert first["price_amount"] == "28.45"
    assert first["currency"] == "CNY"
    assert first["price_text"] == "28.45 CNY/hour"
    assert first["available"] is True
    assert first["vendor"] == "腾讯云 Tencent Cloud"
    assert first["observed_at"] == "2026-11-30T09:00:00Z"
    assert first["vendor_data"] == {"price_field": "postpaidByHour", "instanceFamily": "GT4",
                                    "zone": "ap-beijing-6"}
    assert (first["vcpus_text"], first["memory_text"]) == ("16", "96 GB")


@pytest.mark.parametrize("sku, region, vcpus, memory_gib", [
    ("GT4.41XLARGE948", "ap-beijing", 164, 948),          # 8x A100: the instance's, not a card's
    ("HCCPNV5v.96XLARGE1536", "ap-nanjing", 192, 1536),
])
def test_instances_state_vcpus_and_memory_but_no_disk(by_region, sku, region, vcpus, memory_gib):
    for o in by(by_region, sku, region).values():
        assert machine_specs(o) == {"vcpus": vcpus, "memory_gib": memory_gib, "disk_gb": None}


def test_instance_without_cpu_and_memory_states_none():
    response = file_response("tencent_cn", "gpu_ap-beijing.json")
    instance = {k: v for k, v in response.json()["data"]["instances"][0].items()
                if k not in ("cpu", "memory")}
    for offer in spider.parse_offer(instance, response):
        assert machine_specs(offer) == {"vcpus": None, "memory_gib": None, "disk_gb": None}


def test_three_billing_modes_of_one_instance(by_region):
    row = by(by_region, "GT4.4XLARGE96", "ap-beijing")
    assert {k: o["price_amount"] for k, o in row.items()} == {
        ("on_demand", "hour"): "28.45", ("on_demand", "month"): "13680.00",
        ("spot", "hour"): "6.12"}


def test_hcc_h800_cluster_is_monthly_only(offers):
    hcc = [o for o in offers if o["sku"] == "HCCPNV5v.96XLARGE1536"]
    listed = {(o["region_text"], o["offer_kind"], o["billing_period"], o["price_amount"])
              for o in hcc}
    assert listed == {
        ("ap-beijing", "on_demand", "month", "235000.00"),
        ("ap-shanghai", "on_demand", "month", "235000.00"),
        ("ap-nanjing", "on_demand", "month", "222000.00")}
    assert {o["gpu_count"] for o in hcc} == {8}


def test_sold_out_instance_is_unavailable_without_spot(offers, by_region):
    row = by(by_region, "GT4.41XLARGE948", "ap-shanghai")
    assert set(row) == {("on_demand", "hour"), ("on_demand", "month")}
    assert all(o["available"] is False for o in row.values())
    assert [o["sku"] for o in offers if o["available"] is False] == ["GT4.41XLARGE948"] * 2


def test_v100_instances_are_kept_as_v100_cards(offers):
    v100 = [normalize_offer(o) for o in offers if o["sku"] == "GN10Xp.2XLARGE40"]
    assert len(v100) == 6
    assert {(r["gpu_model"], r["gpu_count"]) for r in v100} == {("V100-32GB", 1)}


def test_tracked_offers_normalize_with_regions(offers):
    rows = [normalize_offer(o) for o in offers if o["sku"] != "GN10Xp.2XLARGE40"]
    assert len(rows) == 26
    assert {r["province_or_state"] for r in rows} == {"Beijing", "Shanghai", "Guangdong", "Jiangsu",
                                                      "Sichuan"}
    eight = next(r for r in rows if (r["sku"], r["region_code"], r["offer_kind"],
                                     r["billing_period"]) == ("GT4.41XLARGE948", "ap-beijing",
                                                              "on_demand", "hour"))
    assert eight["gpu_model"] == "A100-40GB"
    assert eight["price_per_gpu_hour_cny"] == Decimal("28.450000")  # ¥227.60/h for 8 cards


def test_api_error_fails_loudly():
    resp = file_response("tencent_cn", "gpu_ap-beijing.json")
    error = {"code": 4001, "message": "InvalidParameter.Region"}
    broken = resp.replace(body=json.dumps(error).encode())
    with pytest.raises(ValueError, match=r"tencent_cn: API error 4001 \(InvalidParameter.Region\)"):
        list(spider.parse(broken))


def test_offer_invariants(offer):
    assert Decimal(offer["price_amount"]) > 0
    assert offer["currency"] == "CNY"
    assert offer["billing_period"] in ("hour", "month")
    assert offer["offer_kind"] in ("on_demand", "spot")
    assert offer["url"] == API_URL.format(offer["region_text"])
    assert offer["vendor_data"]["zone"].startswith(offer["region_text"] + "-")
    assert len(offer["raw_ref"]) == 64


def test_offers_are_unique(offers):
    keys = [(o["sku"], o["region_text"], o["offer_kind"], o["billing_period"]) for o in offers]
    assert len(keys) == len(set(keys))
