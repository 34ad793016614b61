"""tencent_cn: the region list, then one recorded DescribeZoneInstanceConfigInfos body per zone,
on the public workbench path and the signed (keyed) path (parse once, many checks). The snapshot
holds list prices from Tencent's 价格总览 doc, a sold-out type, vGPU slices, a family the card
table does not know (quarantined), a P40 (GN8), a CPU type
(skipped) and a zone without GPU types."""

from __future__ import annotations

import functools
import json
from decimal import Decimal

import pytest

from pipelines.normalize import Quarantined, normalize_offer
from spiders.parsing.machine import machine_specs
from spiders.replay_server import request_key
from spiders.vendors.tencent_cn import (
    CVM_API,
    REGIONS_URL,
    ZONE_URL,
    TencentCNSpider,
    gpu_of,
    workbench_body,
    zone_filters,
)
from tests.helpers.responses import file_response, snapshot_entries

ZONES = {"ap-beijing-6": "ap-beijing", "ap-shanghai-5": "ap-shanghai",
         "ap-guangzhou-3": "ap-guangzhou", "ap-guangzhou-6": "ap-guangzhou",
         "ap-nanjing-1": "ap-nanjing", "ap-chengdu-1": "ap-chengdu",
         "ap-chongqing-1": "ap-chongqing"}
FAKE_ID, FAKE_KEY = "AKIDfakeTestSecretId0000000000000000", "fakeTestSecretKey+never/a-real-one"
spider = TencentCNSpider(crawl_id="test")


def zone_offers(zone: str, prefix: str = "zone") -> list[dict]:
    response = file_response("tencent_cn", f"{prefix}_{zone}.json")
    return list(spider.parse(response, region=ZONES[zone], zone=zone))


@functools.cache
def parsed() -> dict[str, list[dict]]:
    """{zone: the offers of its recorded workbench body}, parsed once."""
    return {zone: zone_offers(zone) for zone in ZONES}


@pytest.fixture(scope="module")
def by_zone() -> dict[str, list[dict]]:
    return parsed()


@pytest.fixture(scope="module")
def offers(by_zone) -> list[dict]:
    return [o for offers in by_zone.values() for o in offers]


def by(by_zone, sku, zone):
    return {(o["offer_kind"], o["billing_period"]): o for o in by_zone[zone] if o["sku"] == sku}


# --- requests ----------------------------------------------------------------------------------

def test_the_region_list_yields_one_request_per_zone_each_recorded():
    requests = list(spider.parse_regions(file_response("tencent_cn", "regions.json")))
    assert [(r.cb_kwargs["region"], r.cb_kwargs["zone"]) for r in requests] == list(
        (region, zone) for zone, region in ZONES.items())
    recorded = {request_key(e["method"], e["url"], json.dumps(e.get("body")) if e.get("body")
                            else None) for e in snapshot_entries("tencent_cn")}
    for request in requests:
        assert request.method == "POST"
        assert request.url == ZONE_URL.format(request.cb_kwargs["region"])
        assert json.loads(request.body) == workbench_body(request.cb_kwargs["region"],
                                                          request.cb_kwargs["zone"])
        assert request_key("POST", request.url, request.body) in recorded
        assert request.headers[b"Referer"] == b"https://buy.cloud.tencent.com/price/cvm"
        life = request.headers[b"x-life"].decode()
        assert life.isdigit() and len(life) == 13                 # a millisecond timestamp
        assert life not in request.url and life.encode() not in request.body


def test_the_zone_body_asks_for_three_charge_types_of_one_zone_on_linux():
    body = workbench_body("ap-beijing", "ap-beijing-6")
    assert body["data"] == {"Filters": [
        {"Name": "instance-charge-type", "Values": ["PREPAID", "POSTPAID_BY_HOUR", "SPOTPAID"]},
        {"Name": "zone", "Values": ["ap-beijing-6"]}], "Platform": "LINUX", "Version": "2017-03-12"}
    assert (body["serviceType"], body["action"], body["cgiName"]) == (
        "cvm", "DescribeZoneInstanceConfigInfos", "api")


@pytest.mark.parametrize("body, match", [
    ({"code": 1001, "msg": "region not allowed"}, r"region list error 1001"),
    ({"code": 0, "data": {"Response": {}}}, r"no list at 'data.Response.RegionSet'"),
    ([], r"region list error None"),
])
def test_a_broken_region_list_fails_loudly(body, match):
    response = file_response("tencent_cn", "regions.json").replace(body=json.dumps(body).encode())
    with pytest.raises(ValueError, match=match):
        list(spider.parse_regions(response))


def test_a_region_without_zones_asks_nothing_and_a_repeated_zone_once():
    body = {"code": 0, "data": {"Response": {"RegionSet": [
        {"region": "ap-tokyo", "zones": []},
        {"region": "ap-seoul", "zones": [{"zone": "ap-seoul-1"}, {"zone": "ap-seoul-1"}, {}]}]}}}
    response = file_response("tencent_cn", "regions.json").replace(body=json.dumps(body).encode())
    assert [r.cb_kwargs["zone"] for r in spider.parse_regions(response)] == ["ap-seoul-1"]


# --- offers ------------------------------------------------------------------------------------

def test_offer_count_per_zone(offers, by_zone):
    assert {z: len(o) for z, o in by_zone.items()} == {
        "ap-beijing-6": 12, "ap-shanghai-5": 8, "ap-guangzhou-3": 12, "ap-guangzhou-6": 5,
        "ap-nanjing-1": 9, "ap-chengdu-1": 2, "ap-chongqing-1": 0}
    assert len(offers) == 48


def test_first_offer_fields(offers):
    first = offers[0]
    assert {k: first[k] for k in ("sku", "gpu_text", "gpu_count", "region_text", "offer_kind",
                                  "billing_period", "price_amount", "currency",
                                  "available", "vendor", "observed_at")} == {
        "sku": "GT4.4XLARGE96", "gpu_text": "NVIDIA A100-NVLINK-40G", "gpu_count": 1,
        "region_text": "ap-beijing-6", "offer_kind": "on_demand", "billing_period": "hour",
        "price_amount": "28.64", "currency": "CNY",
        "available": True, "vendor": "腾讯云 Tencent Cloud",
        "observed_at": "2026-11-30T09:00:00Z"}
    assert first["vendor_data"] == {
        "price_member": "UnitPrice", "ChargeUnit": "HOUR", "region": "ap-beijing",
        "zone": "ap-beijing-6",
        "InstanceFamily": "GT4", "InstanceChargeType": "POSTPAID_BY_HOUR",
        "TypeName": "GPU计算型GT4", "StatusCategory": "EnoughStock", "GpuCount": 1,
        "UnitPriceDiscount": 22.91, "UnitPriceSecondStep": 0.0, "UnitPriceThirdStep": 0.0}
    assert machine_specs(first) == {"vcpus": 16, "memory_gib": 96, "disk_gb": None}


def test_hourly_is_the_list_price_spot_the_charged_one_monthly_the_list_month(by_zone):
    """UnitPrice (原价) is the on-demand price, not the account's or a promotion's
    UnitPriceDiscount (80 % here); spot is charged UnitPriceDiscount; a month OriginalPrice."""
    row = by(by_zone, "GT4.4XLARGE96", "ap-beijing-6")
    assert {k: o["price_amount"] for k, o in row.items()} == {
        ("on_demand", "hour"): "28.64", ("on_demand", "month"): "13748",
        ("spot", "hour"): "6.3"}
    assert row[("on_demand", "hour")]["vendor_data"]["UnitPriceDiscount"] == 22.91
    assert row[("spot", "hour")]["vendor_data"] == {**row[("spot", "hour")]["vendor_data"],
                                                    "price_member": "UnitPriceDiscount",
                                                    "UnitPrice": 28.64}
    assert row[("on_demand", "month")]["vendor_data"]["DiscountPrice"] == 13748.0


def test_list_prices_are_the_docs(by_zone):
    """价格总览 @ 8ec0729: GT4 28.64/h 13748/month, 8x 237.51 / 114016; GN10Xp 11.98 / 5750."""
    listed = {(sku, zone, period): o["price_amount"] for zone, offers in by_zone.items()
              for o in offers if o["offer_kind"] == "on_demand"
              for sku, period in [(o["sku"], o["billing_period"])]}
    assert {k: v for k, v in listed.items() if k[1] == "ap-beijing-6"} == {
        ("GT4.4XLARGE96", "ap-beijing-6", "hour"): "28.64",
        ("GT4.4XLARGE96", "ap-beijing-6", "month"): "13748",
        ("GT4.41XLARGE948", "ap-beijing-6", "hour"): "237.51",
        ("GT4.41XLARGE948", "ap-beijing-6", "month"): "114016",
        ("GN10Xp.2XLARGE40", "ap-beijing-6", "hour"): "11.98",
        ("GN10Xp.2XLARGE40", "ap-beijing-6", "month"): "5750",
        ("GN7.LARGE20", "ap-beijing-6", "hour"): "3.39",
        ("GN7.LARGE20", "ap-beijing-6", "month"): "975",
        ("HCCPNV5v.96XLARGE1536", "ap-beijing-6", "month"): "235000"}
    assert listed[("GN7.2XLARGE32", "ap-chengdu-1", "hour")] == "7.81"   # the range's low end


def test_sold_out_type_is_unavailable_without_spot(offers, by_zone):
    row = by(by_zone, "GT4.41XLARGE948", "ap-shanghai-5")
    assert set(row) == {("on_demand", "hour"), ("on_demand", "month")}
    assert all(o["available"] is False for o in row.values())
    assert [o["sku"] for o in offers if o["available"] is False] == ["GT4.41XLARGE948"] * 2


@pytest.mark.parametrize("family, gpu_count, gpu, expected", [
    ("GT4", 8, 8, {"gpu_text": "NVIDIA A100-NVLINK-40G", "gpu_count": 8}),
    ("GT4", 1.0, 1, {"gpu_text": "NVIDIA A100-NVLINK-40G", "gpu_count": 1}),
    # a slice: the fraction as served, for normalization to read (spiders/parsing/slices.py)
    ("GN7", 0.25, 1, {"gpu_text": "Tesla T4", "gpu_count": 1, "gpu_fraction": 0.25}),
    ("GN7", 0.5, 1, {"gpu_text": "Tesla T4", "gpu_count": 1, "gpu_fraction": 0.5}),
    ("GN10Xp", None, 2, {"gpu_text": "Tesla V100-NVLINK-32G", "gpu_count": 2}),  # Gpu
    ("HCCPNV5v", 8, 8, {"gpu_text": "HCCPNV5v", "gpu_count": 8}),  # unknown: its own text
    ("S5", 0, 0, None),                                      # a CPU type
    ("GN7", None, None, None),
    ("GN7", -1, 0, None),
])
def test_gpu_of(family, gpu_count, gpu, expected):
    assert gpu_of(family, gpu_count, gpu) == expected


@pytest.mark.parametrize("sku, zone, model, fraction, per_gpu_hour", [
    ("GT4.41XLARGE948", "ap-beijing-6", "A100-40GB", Decimal("1"), Decimal("29.688750")),
    ("GN10Xp.2XLARGE40", "ap-nanjing-1", "V100-32GB", Decimal("1"), Decimal("11.980000")),
    ("GN7.LARGE20", "ap-guangzhou-3", "T4-16GB", Decimal("0.25"), Decimal("13.560000")),
    ("GN7.2XLARGE40", "ap-guangzhou-3", "T4-16GB", Decimal("0.5"), Decimal("13.880000")),
    ("GI3X.8XLARGE64", "ap-guangzhou-3", "T4-16GB", Decimal("1"), Decimal("9.580000")),
])
def test_families_normalize_to_their_cards(by_zone, sku, zone, model, fraction, per_gpu_hour):
    row = normalize_offer(by(by_zone, sku, zone)[("on_demand", "hour")])
    assert (row["gpu_model"], row["gpu_fraction"], row["price_per_gpu_hour_cny"]) == (
        model, fraction, per_gpu_hour)


@pytest.mark.parametrize("sku", ["HCCPNV5v.96XLARGE1536"])
def test_families_without_a_catalogued_card_are_quarantined_with_the_family(offers, sku):
    quarantined = [o for o in offers if o["sku"] == sku]
    assert quarantined
    for offer in quarantined:
        with pytest.raises(Quarantined, match=r"card: unknown GPU model") as why:
            normalize_offer(offer)
        assert offer["gpu_text"].split()[-1] in str(why.value)


def test_gn8_is_a_p40_at_its_listed_price(offers):
    rows = [normalize_offer(o) for o in offers if o["sku"] == "GN8.LARGE56"]
    assert {r["gpu_model"] for r in rows} == {"P40-24GB"}
    assert Decimal("12.070000") in {r["price_per_gpu_hour_cny"] for r in rows}


def test_tracked_offers_normalize_with_regions(offers):
    rows = [normalize_offer(o) for o in offers
            if o["sku"].split(".")[0] != "HCCPNV5v"]
    assert len(rows) == 46   # GN8 (P40) included
    assert {r["province_or_state"] for r in rows} == {"Beijing", "Shanghai", "Guangdong",
                                                      "Jiangsu", "Sichuan"}
    assert {r["region_code"] for r in rows} == set(ZONES) - {"ap-chongqing-1"}


@pytest.mark.parametrize("change, expected", [
    ({"ChargeUnit": "GB"}, ("GB", None)),
    ({"ChargeUnit": None}, (None, None)),
])
def test_a_postpaid_price_in_another_unit_is_quarantined_with_it(change, expected):
    body = json.loads(file_response("tencent_cn", "zone_ap-chengdu-1.json").text)
    item = body["data"]["Response"]["InstanceTypeQuotaSet"][0]
    assert item["InstanceChargeType"] == "POSTPAID_BY_HOUR"
    item["Price"].update(change)
    response = file_response("tencent_cn", "zone_ap-chengdu-1.json").replace(
        body=json.dumps(body).encode())
    hourly = next(spider.parse(response, region="ap-chengdu"))
    assert (hourly["vendor_data"]["ChargeUnit"], hourly["billing_period"]) == expected
    with pytest.raises(Quarantined):
        normalize_offer(hourly)


@pytest.mark.parametrize("charge, member", [("POSTPAID_BY_HOUR", "UnitPrice"),
                                            ("PREPAID", "OriginalPrice")])
def test_a_missing_price_member_gives_no_offer_of_that_charge(charge, member, caplog):
    body = json.loads(file_response("tencent_cn", "zone_ap-chengdu-1.json").text)
    items = body["data"]["Response"]["InstanceTypeQuotaSet"]
    for item in items:
        if item["InstanceChargeType"] == charge:
            del item["Price"][member]
    response = file_response("tencent_cn", "zone_ap-chengdu-1.json").replace(
        body=json.dumps(body).encode())
    left = list(spider.parse(response, region="ap-chengdu"))
    assert [o["vendor_data"]["InstanceChargeType"] for o in left] == [
        c for c in ("POSTPAID_BY_HOUR", "PREPAID") if c != charge]
    assert f"lists no {member}" in caplog.text


@pytest.mark.parametrize("body, match", [
    ({"code": 0, "data": {"Response": {"Error": {"Code": "InvalidParameterValue.Zone",
                                                 "Message": "zone not found"}}}},
     r"API error InvalidParameterValue.Zone \(zone not found\)"),
    ({"Response": {"Error": {"Code": "AuthFailure.SignatureFailure", "Message": "bad sign"},
                   "RequestId": "x"}}, r"API error AuthFailure.SignatureFailure"),
    ({"code": 10001, "msg": "system busy"}, r"workbench error 10001 \(system busy\)"),
    ({"code": 0, "data": {}}, r"no Response"),
    ({"code": 0, "data": {"Response": {"RequestId": "x"}}}, r"no list at 'InstanceTypeQuotaSet'"),
    ({"Response": {"InstanceTypeQuotaSet": None}}, r"no list at 'InstanceTypeQuotaSet'"),
    ([1, 2], r"not a JSON object"),
], ids=["workbench-api-error", "signed-api-error", "workbench-code", "no-response", "no-list",
        "null-list", "not-an-object"])
def test_errors_sent_with_http_200_fail_loudly(body, match):
    response = file_response("tencent_cn", "zone_ap-beijing-6.json").replace(
        body=json.dumps(body).encode())
    with pytest.raises(ValueError, match=match):
        list(spider.parse(response, region="ap-beijing"))


def test_an_empty_zone_gives_no_offer(by_zone):
    body = {"code": 0, "data": {"Response": {"InstanceTypeQuotaSet": [], "RequestId": "x"}}}
    response = file_response("tencent_cn", "zone_ap-beijing-6.json").replace(
        body=json.dumps(body).encode())
    assert list(spider.parse(response, region="ap-beijing")) == []
    assert by_zone["ap-chongqing-1"] == []      # only a CPU type there


def test_the_region_comes_from_the_url_when_no_context_says_it():
    offers = list(spider.parse(file_response("tencent_cn", "zone_ap-nanjing-1.json")))
    assert {o["vendor_data"]["region"] for o in offers} == {"ap-nanjing"}


def test_every_offer_is_yuan_of_its_zones_region(offers):
    for offer in offers:
        assert offer["currency"] == "CNY"
        assert offer["billing_period"] in ("hour", "month")
        assert offer["offer_kind"] in ("on_demand", "spot")
        assert offer["url"] == ZONE_URL.format(offer["vendor_data"]["region"])
        assert offer["region_text"].startswith(offer["vendor_data"]["region"] + "-")


# --- keyed path --------------------------------------------------------------------------------

@pytest.fixture
def fake_keys(monkeypatch):
    monkeypatch.setenv("TENCENTCLOUD_SECRET_ID", FAKE_ID)
    monkeypatch.setenv("TENCENTCLOUD_SECRET_KEY", FAKE_KEY)


def test_without_keys_the_public_path(monkeypatch):
    monkeypatch.delenv("TENCENTCLOUD_SECRET_ID", raising=False)
    monkeypatch.setenv("TENCENTCLOUD_SECRET_KEY", FAKE_KEY)      # one of two is not enough
    assert not TencentCNSpider.keyed()
    assert TencentCNSpider.path_note().startswith("TENCENTCLOUD_SECRET_ID not set: public path")
    assert spider.zone_request("ap-beijing", "ap-beijing-6").url == ZONE_URL.format("ap-beijing")


def test_with_keys_the_sdk_signs_and_the_body_holds_only_the_filters(fake_keys):
    assert TencentCNSpider.keyed()
    request = TencentCNSpider(crawl_id="t").zone_request("ap-beijing", "ap-beijing-6")
    assert (request.method, request.url) == ("POST", CVM_API)
    assert json.loads(request.body) == {"Filters": zone_filters("ap-beijing-6")}
    headers = {k.decode(): v[0].decode() for k, v in request.headers.items()}
    assert headers["X-Tc-Action"] == "DescribeZoneInstanceConfigInfos"
    assert headers["X-Tc-Version"] == "2017-03-12" and headers["X-Tc-Region"] == "ap-beijing"
    assert headers["Authorization"].startswith(
        f"TC3-HMAC-SHA256 Credential={FAKE_ID}/") and "SignedHeaders=content-type;host" in \
        headers["Authorization"]
    for secret in (FAKE_KEY, FAKE_ID):
        assert secret not in request.url and secret.encode() not in request.body
    assert FAKE_KEY not in json.dumps(headers)
    recorded = {request_key(e["method"], e["url"], json.dumps(e["body"]))
                for e in snapshot_entries("tencent_cn") if e["file"].startswith("signed_")}
    assert request_key("POST", request.url, request.body) in recorded


@pytest.mark.parametrize("zone", list(ZONES))
def test_the_signed_answer_reads_as_the_workbench_one(zone, by_zone):
    signed = zone_offers(zone, prefix="signed")
    strip = ("url", "raw_ref")
    assert [{k: v for k, v in o.items() if k not in strip} for o in signed] == [
        {k: v for k, v in o.items() if k not in strip} for o in by_zone[zone]]
    assert all(o["url"] == CVM_API for o in signed)


def test_the_region_list_is_recorded_once_for_both_paths():
    assert [e["file"] for e in snapshot_entries("tencent_cn") if e["url"] == REGIONS_URL] == [
        "regions.json"]


# --- real crawls over the replay server (a `scrapy crawl` subprocess each) ---------------------

def _archived_text(data_dir) -> str:
    """Everything the raw archive wrote: fetch records and every stored body."""
    import gzip
    raw = data_dir / "raw"
    texts = [p.read_text(encoding="utf-8") for p in raw.rglob("*.jsonl")]
    texts += [gzip.decompress(p.read_bytes()).decode("utf-8", "replace")
              for p in raw.rglob("*.gz")]
    return "\n".join(texts)


@pytest.mark.parametrize("keyed", [False, True], ids=["public", "keyed"])
def test_a_crawl_takes_its_path_and_archives_no_secret(keyed, replay_server, tmp_path,
                                                      monkeypatch, offers):
    from tests.helpers.crawl import run_crawl
    for name, value in (("TENCENTCLOUD_SECRET_ID", FAKE_ID),
                        ("TENCENTCLOUD_SECRET_KEY", FAKE_KEY)):
        if keyed:
            monkeypatch.setenv(name, value)
        else:
            monkeypatch.delenv(name, raising=False)
    crawled, verdict = run_crawl("tencent_cn", replay_server.url, tmp_path)
    assert verdict["passed"], verdict["failures"]
    urls = [f["url"] for f in verdict["fetches"] if not f["url"].endswith("/robots.txt")]
    assert urls.count(REGIONS_URL) == 1
    assert len(urls) == 1 + len(ZONES)
    assert set(urls) - {REGIONS_URL} == ({CVM_API} if keyed else
                                         {ZONE_URL.format(r) for r in ZONES.values()})
    key = lambda o: (o["sku"], o["region_text"], o["offer_kind"], o["billing_period"],  # noqa: E731
                     o["price_amount"])
    assert sorted(map(key, crawled)) == sorted(map(key, offers))
    archived = _archived_text(tmp_path)
    assert FAKE_KEY not in archived and FAKE_ID not in archived
