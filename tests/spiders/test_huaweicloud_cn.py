"""华为云 Huawei Cloud: the calculator catalog (public path) and the signed BSS price inquiry (keyed
path) parsed from the recorded snapshot, normalized, and the BSS bodies checked against the SDK's
response models."""

from __future__ import annotations

import copy
import functools
import gzip
import json
import re
from decimal import Decimal

import huaweicloudsdkbss.v2.model as bss_models
import pytest
from huaweicloudsdkcore.auth.credentials import GlobalCredentials
from huaweicloudsdkcore.sdk_request import SdkRequest
from huaweicloudsdkcore.signer.signer import Signer
from scrapy.http import Request, TextResponse
from scrapy.utils.test import get_crawler

from pipelines.normalize import Quarantined, normalize_offer
from spiders.layout import SNAPSHOT_DIR
from spiders.replay_server import request_key
from spiders.vendors.huaweicloud_cn import (
    MENU_URL,
    PLAN_TERMS,
    HuaweiCloudCnSpider,
    ecs_regions,
    has_accelerator,
    product_url,
    unit_text,
)
from tests.helpers.crawl import run_crawl
from tests.helpers.responses import file_response, snapshot_entries

SOURCE = "huaweicloud_cn"
REGIONS = ["cn-north-4", "cn-east-3", "cn-southwest-2", "cn-north-9"]
# Fake keys (the manifest's BSS bodies carry this project id): never a real key anywhere.
FAKE_AK = "FAKEAKHUAWEITEST0001"
FAKE_SK = "fake-sk-huawei-do-not-use-0001"
FAKE_PROJECT_ID = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
KEY_NAMES = ("HUAWEICLOUD_SDK_AK", "HUAWEICLOUD_SDK_SK", "HUAWEICLOUD_SDK_PROJECT_ID",
             "HUAWEICLOUD_SDK_DOMAIN_ID")


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch):
    for name in KEY_NAMES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fake_keys(monkeypatch):
    monkeypatch.setenv("HUAWEICLOUD_SDK_AK", FAKE_AK)
    monkeypatch.setenv("HUAWEICLOUD_SDK_SK", FAKE_SK)
    monkeypatch.setenv("HUAWEICLOUD_SDK_PROJECT_ID", FAKE_PROJECT_ID)


def new_spider() -> HuaweiCloudCnSpider:
    return HuaweiCloudCnSpider.from_crawler(get_crawler(HuaweiCloudCnSpider), crawl_id="test")


def product_file(region: str) -> str:
    return f"product_info_ecs_{region}.json"


def stats(spider) -> dict:
    return {k.removeprefix(f"{SOURCE}/"): v for k, v in spider.crawler.stats.get_stats().items()
            if k.startswith(f"{SOURCE}/")}


@functools.cache
def public_crawl() -> tuple[list, dict]:
    """The public path over the four recorded regions: offers and the spider's skip stats."""
    spider = new_spider()
    offers = [o for region in REGIONS
              for o in spider.parse(file_response(SOURCE, product_file(region)), region=region)]
    return offers, stats(spider)


def body_response(url: str, data) -> TextResponse:
    body = json.dumps(data).encode()
    return TextResponse(url=url, body=body, encoding="utf-8", request=Request(url))


# ---------------------------------------------------------------- public path: requests


def test_the_menu_gives_the_ecs_regions_and_one_product_request_each():
    requests = list(new_spider().parse_menu(file_response(SOURCE, "menu_info.json")))
    assert [r.url for r in requests] == [product_url(r) for r in REGIONS]
    assert "cn-south-1" not in str([r.url for r in requests])      # an other product's region
    for r in requests:
        assert r.headers["Origin"] == b"https://www.huaweicloud.com"
        assert r.headers["Referer"] == b"https://www.huaweicloud.com/pricing/calculator.html"


def test_every_public_request_is_a_recorded_entry():
    keys = {request_key(e["method"], e["url"], json.dumps(e["body"]) if "body" in e else None)
            for e in snapshot_entries(SOURCE)}
    spider = new_spider()
    assert request_key("GET", MENU_URL) in keys
    for r in spider.parse_menu(file_response(SOURCE, "menu_info.json")):
        assert request_key(r.method, r.url, r.body or None) in keys


@pytest.mark.parametrize("menu, regions", [
    ([{"urlPath": "ecs", "regionOnline": {"regionList": ["cn-north-4"]}}], ["cn-north-4"]),
    ([{"urlPath": "x", "subCategoryLists": [
        {"urlPath": "ecs", "regionOnline": {"regionList": ["cn-east-3", "cn-north-9"]}}]}],
     ["cn-east-3", "cn-north-9"]),
    ([{"urlPath": "evs", "regionOnline": {"regionList": ["cn-north-4"]}}], []),
    (None, []),
])
def test_ecs_regions_are_found_at_any_depth(menu, regions):
    assert ecs_regions(menu) == regions


@pytest.mark.parametrize("body", [{"menuInfos": []}, {"error_code": "CBC.0999"}, []])
def test_a_menu_without_ecs_regions_is_loud(body):
    with pytest.raises(ValueError, match="no ECS regions"):
        list(new_spider().parse_menu(body_response(MENU_URL, body)))


# ---------------------------------------------------------------- public path: offers


def test_first_offer_fields():
    offers, _ = public_crawl()
    first = offers[0]
    assert (first["sku"], first["region_text"], first["offer_kind"], first["billing_period"]) \
        == ("p2s.2xlarge.8", "cn-north-4", "on_demand", "hour")
    assert (first["gpu_text"], first["accelerator_text"], first.get("gpu_count")) == (
        "1 * NVIDIA V100 / 1 * 32G", "1 * NVIDIA V100 / 1 * 32G", None)   # as written
    assert Decimal(first["price_amount"]) == Decimal("20.95")
    assert first["currency"] == "CNY"
    assert (first["vcpus_text"], first["memory_text"], first["disk_text"]) == \
        ("8 vCPUs", "64 GiB", None)
    assert first["available"] is None           # a calculator price is not capacity
    assert first["url"] == product_url("cn-north-4")
    assert first["vendor_data"]["price_from"] == "calculator"


# (sku, region, period) -> (gpu_model, gpu_count, CNY per GPU-hour); every recorded offer is here.
EXPECTED = {
    ("p2s.2xlarge.8", "cn-north-4", "hour"): ("V100-32GB", 1, "20.95"),
    ("p2s.2xlarge.8", "cn-north-4", "month"): ("V100-32GB", 1, "13.506849"),
    ("p2s.2xlarge.8", "cn-north-4", "year"): ("V100-32GB", 1, "11.480822"),
    ("p2s.8xlarge.8", "cn-north-4", "hour"): ("V100-32GB", 4, "20.95"),
    ("p2s.8xlarge.8", "cn-north-4", "month"): ("V100-32GB", 4, "13.506849"),
    ("pi2.2xlarge.4", "cn-north-4", "hour"): ("T4-16GB", 1, "7.58"),
    ("pi2.2xlarge.4", "cn-north-4", "month"): ("T4-16GB", 1, "4.986301"),
    ("pi2.2xlarge.4", "cn-north-4", "year"): ("T4-16GB", 1, "4.238356"),
    ("g6.2xlarge.4", "cn-north-4", "hour"): ("T4-16GB", 2, "7.25"),
    ("g6.2xlarge.4", "cn-north-4", "month"): ("T4-16GB", 2, "4.767123"),
    ("p3.16xlarge.8", "cn-north-4", "hour"): ("A100-80GB", 8, "31"),
    ("p3.16xlarge.8", "cn-north-4", "month"): ("A100-80GB", 8, "20.205479"),
    ("pi2.2xlarge.4", "cn-east-3", "hour"): ("T4-16GB", 1, "7.58"),
    ("pi2.2xlarge.4", "cn-east-3", "month"): ("T4-16GB", 1, "4.986301"),
    ("p2s.8xlarge.8", "cn-east-3", "month"): ("V100-32GB", 4, "13.506849"),
    ("p2s.2xlarge.8", "cn-southwest-2", "hour"): ("V100-32GB", 1, "18.86"),
    ("p2s.2xlarge.8", "cn-southwest-2", "month"): ("V100-32GB", 1, "12.156164"),
    ("pi2.2xlarge.4", "cn-southwest-2", "hour"): ("T4-16GB", 1, "6.82"),
    ("pi2.2xlarge.4", "cn-southwest-2", "month"): ("T4-16GB", 1, "4.487671"),
    ("pi2.2xlarge.4", "cn-southwest-2", "year"): ("T4-16GB", 1, "3.814498"),
    ("ai1s.large.4", "cn-southwest-2", "hour"): None,     # Ascend 310: quarantined (card)
    ("p3.16xlarge.8", "cn-north-9", "hour"): ("A100-80GB", 8, "27.9"),
    ("p3.16xlarge.8", "cn-north-9", "month"): ("A100-80GB", 8, "18.082192"),
    ("p3.2xlarge.8", "cn-north-9", "hour"): ("A100-80GB", 1, "27.9"),
    ("p3.2xlarge.8", "cn-north-9", "month"): ("A100-80GB", 1, "18.082192"),
    ("pi2.2xlarge.4", "cn-north-9", "hour"): ("T4-16GB", 1, "6.82"),
}


def test_every_offer_normalizes_to_its_card_count_and_price():
    offers, _ = public_crawl()
    got = {}
    for o in offers:
        key = (o["sku"], o["region_text"], o["billing_period"])
        try:
            row = normalize_offer(o)
        except Quarantined as q:
            assert q.stage == "card" and "Ascend 310" in q.reason, q
            got[key] = None
            continue
        got[key] = (row["gpu_model"], row["gpu_count"],
                    str(row["price_per_gpu_hour_cny"].normalize()))
        assert row["vcpus"] and row["memory_gib"], key
    assert got == {k: v if v is None else (v[0], v[1], str(Decimal(v[2]).normalize()))
                   for k, v in EXPECTED.items()}


def test_places_are_huawei_regions():
    offers, _ = public_crawl()
    places = {}
    for o in offers:
        try:
            row = normalize_offer(o)
        except Quarantined:
            continue
        places[o["region_text"]] = (row["province_or_state"], row["city"])
    assert places == {"cn-north-4": ("Beijing", "Beijing"), "cn-east-3": ("Shanghai", "Shanghai"),
                      "cn-southwest-2": ("Guizhou", "Guiyang"),
                      "cn-north-9": ("Inner Mongolia", "Ulanqab")}


def test_what_is_skipped_is_counted():
    _, skipped = public_crawl()
    assert skipped == {"cpu_flavors_skipped": 5, "non_linux_images_skipped": 1,
                       "multi_period_plans_skipped": 1, "ri_plans_skipped": 1,
                       "flavors_without_plans": 1, "plans_without_price": 1}


def test_local_disk_is_kept_and_zero_is_none():
    offers, _ = public_crawl()
    g6 = next(o for o in offers if o["sku"] == "g6.2xlarge.4")
    assert g6["disk_text"] == "2*1.8T NVMe SSD"
    assert normalize_offer(g6)["disk_gb"] == Decimal(3600)


def _flavor(plans, card="1 * NVIDIA T4 / 1 * 16G", image="linux") -> dict:
    return {"resourceSpecCode": f"pi2.2xlarge.4.{image}", "spec": "pi2.2xlarge.4",
            "imageSpec": image, "cpu": "8BSSUNIT.pluralUnit.23", "mem": "32BSSUNIT.pluralUnit.102",
            "acceleratorCard": card, "localDisk": "0", "planList": plans}


def _catalog(*vms, region="cn-north-4") -> TextResponse:
    return body_response(product_url(region), {"region": region, "product": {"ec2_vm": list(vms)}})


@pytest.mark.parametrize("plan, expected, stat", [
    ({"billingMode": "ONDEMAND", "periodNum": None, "amount": 7.58}, ("on_demand", "hour"), None),
    ({"billingMode": "ONDEMAND", "amount": 7.58}, ("on_demand", "hour"), None),
    ({"billingMode": "MONTHLY", "periodNum": 1, "amount": 3640}, ("on_demand", "month"), None),
    ({"billingMode": "MONTHLY", "periodNum": None, "amount": 3640}, ("on_demand", "month"), None),
    ({"billingMode": "MONTHLY", "periodNum": 3, "amount": 10000}, None,
     "multi_period_plans_skipped"),
    ({"billingMode": "YEARLY", "periodNum": 1, "amount": 37128}, ("on_demand", "year"), None),
    ({"billingMode": "YEARLY", "periodNum": 3, "amount": 90000}, None,
     "multi_period_plans_skipped"),
    ({"billingMode": "YEARLY", "periodNum": None, "amount": 37128}, None,
     "multi_period_plans_skipped"),
    ({"billingMode": "RI", "periodNum": 1, "amount": 30000}, None, "ri_plans_skipped"),
    ({"billingMode": "SPOT", "periodNum": None, "amount": 2.1}, None, "unknown_billing_modes"),
    ({"billingMode": "ONDEMAND", "periodNum": None, "amount": None}, None, "plans_without_price"),
    ({"billingMode": "ONDEMAND", "periodNum": None, "amount": 0}, None, "plans_without_price"),
])
def test_billing_modes(plan, expected, stat):
    spider = new_spider()
    offers = list(spider.parse(_catalog(_flavor([plan])), region="cn-north-4"))
    if expected is None:
        assert offers == [] and stats(spider) == {stat: 1}
    else:
        [offer] = offers
        assert (offer["offer_kind"], offer["billing_period"]) == expected
        assert Decimal(offer["price_amount"]) == Decimal(str(plan["amount"]))
        assert stats(spider) == {}
        normalize_offer(offer)


def test_plan_terms_name_only_known_periods():
    from spiders.parsing.prices import HOURS_PER_PERIOD
    assert {period for _, period, _ in PLAN_TERMS.values()} <= set(HOURS_PER_PERIOD)


@pytest.mark.parametrize("text, model, count", [
    # the reading itself is tests/parsing/test_count_cells.py's; here, the spider's offer
    ("2 * NVIDIAT4 / 2 * 16G", "T4-16GB", 2),
    ("8 * NVIDIA A100 / 8 * 80G", "A100-80GB", 8),
    ("NVIDIA T4", None, None),                            # no count written: quarantined
    ("2 * NVIDIA T4 / 4 * 16G", None, None),              # two counts: quarantined
])
def test_accelerator_cards_go_as_written_and_normalize(text, model, count):
    spider = new_spider()
    [offer] = spider.parse(_catalog(_flavor([{"billingMode": "ONDEMAND", "amount": 9.9}], text)),
                           region="cn-north-4")
    assert (offer["gpu_text"], offer["accelerator_text"]) == (text, text)
    if count is None:
        with pytest.raises(Quarantined, match="names no card count") as caught:
            normalize_offer(offer)
        assert caught.value.stage == "card"
        return
    row = normalize_offer(offer)
    assert (row["gpu_model"], row["gpu_count"]) == (model, count)


@pytest.mark.parametrize("text, gpu", [("", False), ("0", False), (None, False), ("  ", False),
                                       ("1 * NVIDIA T4", True), ("NVIDIA T4", True)])
def test_no_accelerator_is_a_cpu_flavor(text, gpu):
    assert has_accelerator(text) is gpu


@pytest.mark.parametrize("text, unit, expected", [
    ("8BSSUNIT.pluralUnit.23", "vCPUs", "8 vCPUs"),
    ("1BSSUNIT.unit.23", "vCPUs", "1 vCPUs"),
    ("2dataInfo_36_", "vCPUs", "2 vCPUs"),
    ("32BSSUNIT.pluralUnit.102", "GiB", "32 GiB"),
    ("0.5BSSUNIT.pluralUnit.102", "GiB", "0.5 GiB"),
    ("16 vCPUs", "vCPUs", "16 vCPUs"),
    (None, "GiB", None),
])
def test_cpu_and_memory_texts(text, unit, expected):
    assert unit_text(text, unit) == expected


# ---------------------------------------------------------------- public path: unhappy bodies


@pytest.mark.parametrize("body, match", [
    ({"error_code": "CBC.0999", "error_msg": "system error"}, "no product catalog"),
    ({"retCode": "-1", "product": None}, "no product catalog"),
    ({"region": "cn-north-4", "product": {"vm": []}}, "no list at 'product.ec2_vm'"),
    ({"region": "cn-east-3", "product": {"ec2_vm": []}}, "asked for cn-north-4"),
    ([], "no product catalog"),
])
def test_an_error_or_changed_catalog_is_loud(body, match):
    with pytest.raises(ValueError, match=match):
        list(new_spider().parse(body_response(product_url("cn-north-4"), body),
                                region="cn-north-4"))


def test_an_empty_region_yields_nothing_quietly():
    spider = new_spider()
    assert list(spider.parse(_catalog(), region="cn-north-4")) == [] and stats(spider) == {}


@pytest.mark.parametrize("old, new", [("acceleratorCard", "gpuCard"), ("planList", "plans"),
                                      ("imageSpec", "image"), ("spec", "flavor")])
def test_a_renamed_flavor_field_is_loud(old, new):
    data = json.loads((SNAPSHOT_DIR / SOURCE / product_file("cn-north-4")).read_text())
    for vm in data["product"]["ec2_vm"]:
        vm[new] = vm.pop(old)
    with pytest.raises((ValueError, KeyError)):
        list(new_spider().parse(body_response(product_url("cn-north-4"), data),
                                region="cn-north-4"))


@pytest.mark.parametrize("old, new", [("billingMode", "mode"), ("amount", "price")])
def test_a_renamed_plan_field_is_loud(old, new):
    plan = {"billingMode": "ONDEMAND", "periodNum": None, "amount": 7.58}
    plan[new] = plan.pop(old)
    with pytest.raises(KeyError):
        list(new_spider().parse(_catalog(_flavor([plan])), region="cn-north-4"))


# Every field the public clients show a calculator flavor with (fuzzbuster scrape.go portalVM,
# j0taaa lib/catalog.ts ProductFlavor): the productInfo body has no SDK model, so its shape is
# held to what those clients read.
CLIENT_FLAVOR_FIELDS = {"resourceSpecCode", "cpu", "mem", "instanceArch", "acceleratorCard",
                        "localDisk", "generation", "spec", "imageSpec", "planList", "productId"}
CLIENT_PLAN_FIELDS = {"billingMode", "periodNum", "amount", "productId"}


def test_recorded_catalog_uses_only_fields_the_public_clients_show():
    for region in REGIONS:
        data = json.loads((SNAPSHOT_DIR / SOURCE / product_file(region)).read_text())
        assert set(data) == {"region", "product"} and set(data["product"]) == {"ec2_vm"}
        for vm in data["product"]["ec2_vm"]:
            assert set(vm) <= CLIENT_FLAVOR_FIELDS, set(vm) - CLIENT_FLAVOR_FIELDS
            for plan in vm["planList"]:
                assert set(plan) <= CLIENT_PLAN_FIELDS, set(plan) - CLIENT_PLAN_FIELDS
    menu = json.loads((SNAPSHOT_DIR / SOURCE / "menu_info.json").read_text())
    assert set(menu) == {"menuInfos"}


# ---------------------------------------------------------------- keyed path


def _entry_for(request) -> dict:
    key = request_key(request.method, request.url, request.body)
    found = [e for e in snapshot_entries(SOURCE)
             if request_key(e["method"], e["url"], json.dumps(e.get("body")) if e.get("body")
                            else None) == key]
    assert len(found) == 1, f"no recorded entry for {request.method} {request.url} {request.body!r}"
    return found[0]


def _replayed(request) -> TextResponse:
    entry = _entry_for(request)
    body = (SNAPSHOT_DIR / SOURCE / entry["file"]).read_bytes()
    return TextResponse(url=request.url, body=body, encoding="utf-8", request=request)


@functools.cache
def _keyed_requests_and_offers() -> tuple[list, list, dict]:
    spider = new_spider()
    requests, offers = [], []
    for region in REGIONS:
        for request in spider.parse(file_response(SOURCE, product_file(region)), region=region):
            assert isinstance(request, Request), "the keyed path prices through BSS only"
            requests.append(request)
            offers += list(request.callback(_replayed(request), **request.cb_kwargs))
    return requests, offers, stats(spider)


@pytest.fixture
def keyed(fake_keys):
    return _keyed_requests_and_offers()


def test_keyed_path_signs_three_bss_inquiries_per_region(keyed):
    requests, _, _ = keyed
    assert HuaweiCloudCnSpider.keyed()
    assert len(requests) == 3 * len(REGIONS)
    paths = sorted({r.url for r in requests})
    assert paths == ["https://bss.myhuaweicloud.com/v2/bills/ratings/on-demand-resources",
                     "https://bss.myhuaweicloud.com/v2/bills/ratings/period-resources/subscribe-rate"]
    for r in requests:
        assert r.method == "POST"
        auth = r.headers["Authorization"].decode()
        assert auth.startswith(f"SDK-HMAC-SHA256 Access={FAKE_AK}, SignedHeaders=")
        assert FAKE_SK not in r.url and FAKE_SK.encode() not in r.body
        assert FAKE_SK not in json.dumps({k.decode(): [v.decode() for v in vs]
                                          for k, vs in r.headers.items()})
        body = json.loads(r.body)
        assert body["project_id"] == FAKE_PROJECT_ID
        assert all(p["resource_spec"].endswith(".linux") for p in body["product_infos"])


def test_the_signature_is_the_sdk_signers(keyed):
    """Re-signing the same request with huaweicloudsdkcore's Signer at the same time gives the
    same Authorization: the SDK signs, the spider only sends."""
    requests, _, _ = keyed
    r = requests[0]
    headers = {k.decode(): r.headers[k].decode() for k in r.headers}
    resign = SdkRequest(method="POST", schema="https", host="bss.myhuaweicloud.com",
                        resource_path="/v2/bills/ratings/on-demand-resources", query_params=[],
                        header_params={"Content-Type": headers["Content-Type"],
                                       "X-Sdk-Date": headers["X-Sdk-Date"]},
                        body=r.body.decode())
    Signer(GlobalCredentials(FAKE_AK, FAKE_SK)).sign(resign)
    assert resign.header_params["Authorization"] == headers["Authorization"]


def test_keyed_offers_are_the_bss_prices(keyed, monkeypatch):
    _, offers, skipped = keyed
    got = {(o["sku"], o["region_text"], o["billing_period"]): Decimal(o["price_amount"])
           for o in offers}
    assert len(got) == len(offers)
    assert all(o["vendor_data"]["price_from"] == "bss" and o["currency"] == "CNY" for o in offers)
    assert got[("p2s.2xlarge.8", "cn-north-4", "hour")] == Decimal("20.95")
    assert got[("p3.16xlarge.8", "cn-north-9", "month")] == Decimal("105600.0")
    # priced by BSS although the calculator showed no yearly plan
    assert ("p3.2xlarge.8", "cn-north-9", "year") in got
    # listed without plans in the calculator and not rated by BSS for any term
    assert not any(k[:2] == ("p2s.2xlarge.8", "cn-east-3") for k in got)
    assert skipped["bss_unrated_flavors"] == 3
    for key in ("HUAWEICLOUD_SDK_AK", "HUAWEICLOUD_SDK_SK", "HUAWEICLOUD_SDK_PROJECT_ID"):
        monkeypatch.delenv(key)      # the public path is the one a run without keys takes
    public, _ = public_crawl()
    # the keyed path replaces the calculator's prices, never adds a second offer for one
    assert {(o["sku"], o["region_text"]) for o in public} <= \
        {(o["sku"], o["region_text"]) for o in offers}


@pytest.mark.parametrize("data, match", [
    ({"error_code": "CBC.0101", "error_msg": "Invalid parameter."}, "BSS price inquiry failed"),
    ({"amount": 1, "currency": "CNY"}, "without product_rating_results"),
    ({"measure_id": 3, "product_rating_results": []}, "unknown measure"),
])
def test_a_bss_error_or_changed_answer_is_loud(data, match):
    url = "https://bss.myhuaweicloud.com/v2/bills/ratings/on-demand-resources"
    with pytest.raises(ValueError, match=match):
        list(new_spider().parse_bss(body_response(url, data), region="cn-north-4",
                                    period="hour",
                                    response_type="ListOnDemandResourceRatingsResponse",
                                    flavors=[]))


def test_without_the_keys_the_public_path_is_taken_and_said():
    assert not HuaweiCloudCnSpider.keyed()
    note = HuaweiCloudCnSpider.path_note()
    assert note.startswith("HUAWEICLOUD_SDK_AK, HUAWEICLOUD_SDK_SK, HUAWEICLOUD_SDK_PROJECT_ID "
                           "not set: public path")


# ---------------------------------------------------------------- the SDK is the shape check

# What the spider reads of each model: a body without it is not a rating it can use.
READ_FIELDS = {
    "ListOnDemandResourceRatingsResponse": {"product_rating_results"},
    "DemandProductRatingResult": {"id", "official_website_amount"},
    "ListRateOnPeriodDetailResponse": {"official_website_rating_result"},
    "OfficialWebsiteRatingResult": {"product_rating_results"},
    "PeriodProductOfficialRatingResult": {"id", "official_website_amount"},
}


def sdk_shape_problems(data, type_name: str, path: str = "$") -> list[str]:
    """Where `data` leaves the SDK model `type_name` (openapi_types / attribute_map): a field the
    model does not know, a field the spider reads that is missing, a nested value of the wrong
    kind."""
    if m := re.fullmatch(r"list\[(.+)\]", type_name):
        if not isinstance(data, list):
            return [f"{path}: not a list"]
        return [p for i, item in enumerate(data)
                for p in sdk_shape_problems(item, m.group(1), f"{path}[{i}]")]
    klass = getattr(bss_models, type_name, None)
    if klass is None:                                  # a primitive: str, int, decimal.Decimal
        return []
    if not isinstance(data, dict):
        return [f"{path}: not an object ({type_name})"]
    by_json = {json_name: attr for attr, json_name in klass.attribute_map.items()}
    problems = [f"{path}.{k}: not a field of {type_name}" for k in data if k not in by_json]
    problems += [f"{path}.{k}: missing ({type_name})"
                 for k in sorted(READ_FIELDS.get(type_name, ()))
                 if data.get(klass.attribute_map[k]) is None]
    for key, value in data.items():
        if key in by_json and value is not None:
            problems += sdk_shape_problems(value, klass.openapi_types[by_json[key]],
                                           f"{path}.{key}")
    return problems


def bss_bodies() -> list[tuple[str, str]]:
    out = []
    for e in snapshot_entries(SOURCE):
        if "bss.myhuaweicloud.com" in e["url"]:
            kind = "ListOnDemandResourceRatingsResponse" if "on-demand" in e["url"] \
                else "ListRateOnPeriodDetailResponse"
            out.append((e["file"], kind))
    return out


@pytest.mark.parametrize("file, response_type", bss_bodies())
def test_every_recorded_bss_body_passes_the_sdk_model(file, response_type):
    data = json.loads((SNAPSHOT_DIR / SOURCE / file).read_text(), parse_float=Decimal)
    assert sdk_shape_problems(data, response_type) == []


def test_the_keyed_snapshot_has_a_body_for_every_region_and_term():
    assert len(bss_bodies()) == 3 * len(REGIONS)


# The shape of Huawei's BSS documentation examples (docs/sources.md, huaweicloud_cn), rebuilt
# with other numbers: on-demand results without product_id, a period answer with an empty
# optional_discount_rating_results.
DOC_SHAPED = [
    ({"amount": 1.5, "discount_amount": 0.0, "official_website_amount": 1.5, "measure_id": 1,
      "currency": "CNY", "product_rating_results": [
          {"id": "1", "amount": 1.2, "discount_amount": 0.0, "official_website_amount": 1.2,
           "measure_id": 1},
          {"id": "2", "amount": 0.3, "discount_amount": 0.0, "official_website_amount": 0.3,
           "measure_id": 1}]}, "ListOnDemandResourceRatingsResponse"),
    ({"official_website_rating_result": {
        "official_website_amount": 9.9, "measure_id": 1, "product_rating_results": [
            {"id": "1", "product_id": "00301-000000-0--0", "official_website_amount": 9.9,
             "measure_id": 1}]},
      "optional_discount_rating_results": [], "currency": "CNY"},
     "ListRateOnPeriodDetailResponse"),
]


@pytest.mark.parametrize("data, response_type", DOC_SHAPED)
def test_the_documentation_examples_shape_passes_the_sdk_model(data, response_type):
    assert sdk_shape_problems(data, response_type) == []


def _rename(data: dict, path: list, new: str) -> dict:
    copied = copy.deepcopy(data)
    node = copied
    for step in path[:-1]:
        node = node[step]
    node[new] = node.pop(path[-1])
    return copied


@pytest.mark.parametrize("file, path, new", [
    ("bss_on_demand_cn-north-4.json", ["product_rating_results", 0, "official_website_amount"],
     "official_web_amount"),
    ("bss_on_demand_cn-north-4.json", ["product_rating_results"], "productRatingResults"),
    ("bss_period_month_cn-north-4.json", ["official_website_rating_result",
                                          "product_rating_results", 0, "id"], "product_seq"),
    ("bss_period_year_cn-east-3.json", ["official_website_rating_result"], "official_result"),
])
def test_a_renamed_field_fails_the_shape_check(file, path, new):
    data = json.loads((SNAPSHOT_DIR / SOURCE / file).read_text(), parse_float=Decimal)
    response_type = dict(bss_bodies())[file]
    assert sdk_shape_problems(data, response_type) == []
    problems = sdk_shape_problems(_rename(data, path, new), response_type)
    assert any(f"{new}: not a field" in p for p in problems), problems
    assert any("missing" in p for p in problems), problems


def test_a_renamed_bss_field_fails_the_spider_too():
    data = json.loads((SNAPSHOT_DIR / SOURCE / "bss_on_demand_cn-north-4.json").read_text())
    url = "https://bss.myhuaweicloud.com/v2/bills/ratings/on-demand-resources"
    with pytest.raises(ValueError, match="without product_rating_results"):
        list(new_spider().parse_bss(
            body_response(url, _rename(data, ["product_rating_results"], "results")),
            region="cn-north-4", period="hour",
            response_type="ListOnDemandResourceRatingsResponse", flavors=[]))


# ---------------------------------------------------------------- real crawls over replay


def test_public_crawl_over_replay_passes_its_monitor(replay_server, tmp_path):
    offers, verdict = run_crawl(SOURCE, replay_server.url, tmp_path)
    assert verdict["passed"], verdict["failures"]
    assert len(offers) == len(EXPECTED)
    assert all("bss.myhuaweicloud.com" not in f["url"] for f in verdict["fetches"])


def test_keyed_crawl_over_replay_sends_signed_inquiries_and_never_stores_the_secret(
        replay_server, tmp_path, fake_keys):
    offers, verdict = run_crawl(SOURCE, replay_server.url, tmp_path)
    assert verdict["passed"], verdict["failures"]
    assert offers and all(o["vendor_data"]["price_from"] == "bss" for o in offers)
    bss = [f for f in verdict["fetches"] if f["method"] == "POST"
           and f["url"].startswith("https://bss.myhuaweicloud.com/v2/bills/ratings/")]
    assert len(bss) == 3 * len(REGIONS) and all(f["status"] == 200 for f in bss)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            raw = path.read_bytes()
            raw = gzip.decompress(raw) if path.suffix == ".gz" else raw
            assert FAKE_SK.encode() not in raw, path
            assert FAKE_AK.encode() not in raw, path


def test_a_domain_id_when_given_is_sent_and_signed(fake_keys, monkeypatch):
    monkeypatch.setenv("HUAWEICLOUD_SDK_DOMAIN_ID", "0123456789abcdef0123456789abcdef")
    [request, *_] = new_spider().parse(file_response(SOURCE, product_file("cn-north-4")),
                                       region="cn-north-4")
    assert request.headers["X-Domain-Id"] == b"0123456789abcdef0123456789abcdef"
    assert "x-domain-id" in request.headers["Authorization"].decode().split("SignedHeaders=")[1]
    _entry_for(request)            # the body, hence the replay key, does not change
