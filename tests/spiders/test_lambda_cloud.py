"""Lambda: the public price page (default, no key) and the keyed instance-types API."""

import asyncio
import functools
import json
from decimal import Decimal

import pytest
from scrapy.utils.test import get_crawler

from pipelines.normalize import normalize_offer
from spiders.parsing.machine import machine_specs
from spiders.vendors.lambda_cloud import API_URL, PAGE_URL, LambdaCloudSpider
from tests.helpers.responses import file_response

spider = LambdaCloudSpider(crawl_id="test")


@functools.cache
def parsed() -> tuple[list[dict], list[dict]]:
    """The offers of the recorded price page and of the recorded API answer, parsed once
    (collection needs them too: one invariants test per offer)."""
    return (list(spider.parse(file_response("lambda_cloud", "gpu_cloud.html"))),
            list(spider.parse_api(file_response("lambda_cloud", "instance_types.json"))))


@pytest.fixture(scope="module")
def page_response():
    return file_response("lambda_cloud", "gpu_cloud.html")


@pytest.fixture(scope="module")
def api_response():
    return file_response("lambda_cloud", "instance_types.json")


@pytest.fixture(scope="module")
def page_offers() -> list[dict]:
    return parsed()[0]


@pytest.fixture(scope="module")
def page_by_sku(page_offers) -> dict[str, dict]:
    return {o["sku"]: o for o in page_offers}


@pytest.fixture(scope="module")
def api_offers() -> list[dict]:
    return parsed()[1]


@pytest.fixture(scope="module")
def api_by_key(api_offers) -> dict[tuple, dict]:
    return {(o["sku"], o["region_text"]): o for o in api_offers}


def pytest_generate_tests(metafunc):
    """The tests taking `offer` run once per recorded offer (collection needs the list)."""
    if metafunc.function.__name__ == "test_offer_invariants":
        metafunc.parametrize("offer", [*parsed()[0], *parsed()[1]],
                             ids=lambda o: f"{o['sku']}-{o['region_text']}")


def _start_requests(monkeypatch, key):
    if key is None:
        monkeypatch.delenv("LAMBDA_API_KEY", raising=False)
    else:
        monkeypatch.setenv("LAMBDA_API_KEY", key)

    async def collect():
        return [r async for r in LambdaCloudSpider(crawl_id="t").start()]
    return asyncio.run(collect())


def test_without_a_key_the_spider_reads_the_page(monkeypatch):
    [request] = _start_requests(monkeypatch, None)
    assert request.url == PAGE_URL and "Authorization" not in request.headers


def test_with_a_key_the_spider_calls_the_api(monkeypatch):
    [request] = _start_requests(monkeypatch, "secret-test-key")
    assert request.url == API_URL
    assert request.headers["Authorization"] == b"Bearer secret-test-key"
    assert request.callback.__name__ == "parse_api"


# --- page path -------------------------------------------------------------------------------

def test_page_yields_every_gpu_row_the_mission_cards_and_the_others(page_offers, page_by_sku):
    assert len(page_offers) == 14
    assert {"8x B200 (180 GB SXM6)", "1x GH200 (96 GB)", "1x A10 (24 GB PCIe)"} <= set(page_by_sku)


@pytest.mark.parametrize("sku, model, variant, count, per_gpu_usd", [
    ("8x B200 (180 GB SXM6)", "B200-180GB", "SXM", 8, "4.990000"),
    ("1x GH200 (96 GB)", "GH200-96GB", None, 1, "1.490000"),
    ("1x A10 (24 GB PCIe)", "A10-24GB", "PCIe", 1, "0.750000"),
])
def test_non_mission_cards_are_normalized_not_dropped(sku, model, variant, count, per_gpu_usd,
                                                      page_by_sku):
    row = normalize_offer(page_by_sku[sku])
    assert (row["gpu_model"], row["gpu_variant"], row["gpu_count"]) == (model, variant, count)
    assert row["price_per_gpu_hour_usd"] == Decimal(per_gpu_usd)


def test_a_row_in_another_wording_goes_to_normalization_as_written(page_response):
    # no "Nx" prefix and a bare price: the count is read from the name, "/ GPU" from the price
    cells = {"Instance type": "NVIDIA H200 8-GPU", "VRAM / GPU": "141 GB",
             "Price": "$3.79 / GPU / hr"}
    [offer] = spider.parse_row(cells, page_response)
    assert (offer["gpu_text"], offer["gpu_count"], offer["price_per_card"]) == (
        "NVIDIA H200 8-GPU", 8, True)
    assert "price_amount" not in offer
    row = normalize_offer(offer)
    assert (row["gpu_model"], row["gpu_count"]) == ("H200-141GB", 8)
    assert row["price_per_gpu_hour_usd"] == Decimal("3.790000")


def test_per_gpu_price_becomes_the_instance_price(page_by_sku):
    o = page_by_sku["8x A100 (80 GB SXM4)"]
    assert o["price_text"] == "$2.79 / GPU / hr"
    assert (o["price_amount"], o["gpu_count"], o["gpu_text"]) == ("22.32", 8, "A100 (80 GB SXM4)")
    row = normalize_offer(o)
    assert row["price_per_gpu_hour_usd"] == Decimal("2.790000")
    assert (row["gpu_model"], row["gpu_variant"]) == ("A100-80GB", "SXM")


@pytest.mark.parametrize("sku, amount", [
    ("1x A100 (40 GB PCIe)", "1.99"), ("1x A100 (40 GB SXM4)", "1.99"),
    ("2x A100 (40 GB PCIe)", "3.98"), ("4x A100 (40 GB PCIe)", "7.96"),
    ("8x A100 (40 GB SXM4)", "15.92"), ("8x A100 (80 GB SXM4)", "22.32"),
    ("1x H100 (80 GB PCIe)", "3.29"), ("1x H100 (80 GB SXM5)", "4.29"),
    ("2x H100 (80 GB SXM5)", "8.38"), ("4x H100 (80 GB SXM5)", "16.36"),
    ("8x H100 (80 GB SXM5)", "31.92"),
])
def test_page_instance_prices_match_the_catalog(sku, amount, page_by_sku):
    assert page_by_sku[sku]["price_amount"] == amount


def test_page_offers_carry_the_country_only_region(page_by_sku):
    row = normalize_offer(page_by_sku["1x H100 (80 GB PCIe)"])
    assert (row["region_code"], row["country"], row["province_or_state"]) == ("us", "US", None)
    assert page_by_sku["1x H100 (80 GB PCIe)"]["available"] is None  # the page does not say


@pytest.mark.parametrize("sku, vcpus, memory_gib, disk_gb", [
    ("1x A100 (40 GB PCIe)", 30, 200, "549.76"),      # "512 GiB SSD"
    ("8x H100 (80 GB SXM5)", 208, 1800, "24189.26"),  # "22 TiB SSD"
    ("1x A10 (24 GB PCIe)", 30, 200, "1539.32"),      # "1.4 TiB SSD"
])
def test_page_offers_carry_the_instance_machine(sku, vcpus, memory_gib, disk_gb, page_by_sku):
    assert machine_specs(page_by_sku[sku]) == {
        "vcpus": vcpus, "memory_gib": memory_gib, "disk_gb": Decimal(disk_gb)}
    assert page_by_sku["1x A100 (40 GB PCIe)"]["disk_text"] == "512 GiB SSD"


def test_a_page_without_machine_columns_still_yields_its_prices(page_response):
    cells = {"Instance type": "1x H100 (80 GB PCIe)", "VRAM / GPU": "80 GB", "Price": "$3.29 / hr"}
    [offer] = spider.parse_row(cells, page_response)
    assert offer["price_amount"] == "3.29"
    assert machine_specs(offer) == {"vcpus": None, "memory_gib": None, "disk_gb": None}


def test_changed_page_layout_fails_loudly(page_response):
    changed = page_response.replace(
        body=page_response.body.replace(b"<th>Price</th>", b"<th>Cost</th>"))
    with pytest.raises(ValueError, match=r"lambda_cloud: table headers \['Price'\] not found"):
        list(spider.parse(changed))


# --- keyed API path --------------------------------------------------------------------------

def test_api_one_offer_per_region_with_capacity(api_offers, api_by_key):
    # 1x A10: 1, 1x A100: 1 region, 1x H100 PCIe: 2, 1x H100 SXM: 1, 8x A100 80GB: none -> 1,
    # 8x H100: 3
    assert len(api_offers) == 9
    assert {r for s, r in api_by_key if s == "gpu_8x_h100_sxm5"} == {
        "us-east-1", "europe-central-1", "asia-northeast-1"}
    a10 = normalize_offer(api_by_key["gpu_1x_a10", "us-east-1"])
    assert (a10["gpu_model"], a10["price_per_gpu_hour_usd"]) == ("A10-24GB", Decimal("0.750000"))


def _api_type(name: str, description: str, gpus: int) -> dict:
    return {"instance_type": {"name": name, "description": description,
                              "price_cents_per_hour": 120, "specs": {"gpus": gpus}},
            "regions_with_capacity_available": [{"name": "us-east-1"}]}


def test_api_cpu_only_type_is_skipped_and_counted(api_response):
    crawler = get_crawler(LambdaCloudSpider)
    fresh = LambdaCloudSpider.from_crawler(crawler, crawl_id="test")
    body = {"data": {"cpu_4x_general": _api_type("cpu_4x_general", "4x CPU (General)", 0),
                     "gpu_2x_gh200": _api_type("gpu_2x_gh200", "GH200 pair", 2)}}
    offers = list(fresh.parse_api(api_response.replace(body=json.dumps(body).encode())))
    assert [(o["sku"], o["gpu_text"], o["gpu_count"]) for o in offers] == [
        ("gpu_2x_gh200", "GH200 pair", 2)]   # another wording: the description and specs.gpus
    assert crawler.stats.get_value("lambda_cloud/cpu_only_skipped") == 1


def test_api_offer_fields(api_by_key):
    o = api_by_key["gpu_1x_h100_sxm5", "us-south-1"]
    assert (o["gpu_text"], o["gpu_count"], o["price_amount"]) == ("H100 (80 GB SXM5)", 1, "4.29")
    assert (o["price_text"], o["currency"]) == ("429 cents/hour", "USD")
    assert o["billing_period"] == "hour"
    assert o["available"] is True and o["url"] == API_URL


def test_api_offers_carry_the_instance_specs(api_by_key):
    o = api_by_key["gpu_8x_h100_sxm5", "europe-central-1"]
    assert (o["vcpus_text"], o["memory_text"], o["disk_text"]) == ("208", "1800 GiB", "22528 GiB")
    assert machine_specs(o) == {"vcpus": 208, "memory_gib": 1800, "disk_gb": Decimal("24189.26")}


def test_api_type_without_specs_states_no_machine(api_response):
    crawler = get_crawler(LambdaCloudSpider)
    fresh = LambdaCloudSpider.from_crawler(crawler, crawl_id="test")
    body = {"data": {"gpu_2x_gh200": _api_type("gpu_2x_gh200", "2x GH200 (96 GB)", 2)}}
    [offer] = fresh.parse_api(api_response.replace(body=json.dumps(body).encode()))
    assert machine_specs(offer) == {"vcpus": None, "memory_gib": None, "disk_gb": None}


def test_page_and_api_agree_on_the_machine(page_by_sku, api_by_key):
    # vCPUs and RAM match exactly; the page rounds some disks ("1.4 TiB" for 1400 GiB)
    for (sku, region), api in api_by_key.items():
        page = machine_specs(page_by_sku[api["vendor_data"]["description"]])
        assert {k: page[k] for k in ("vcpus", "memory_gib")} == {
            k: machine_specs(api)[k] for k in ("vcpus", "memory_gib")}, (sku, region)


def test_api_type_without_capacity_keeps_its_price_unavailable(api_by_key):
    o = api_by_key["gpu_8x_a100_80gb_sxm4", "us"]
    assert (o["price_amount"], o["gpu_count"], o["available"]) == ("22.32", 8, False)


def test_api_regions_resolve(api_by_key):
    rows = {r: normalize_offer(api_by_key["gpu_8x_h100_sxm5", r])
            for r in ("us-east-1", "europe-central-1", "asia-northeast-1")}
    assert {r: (x["country"], x["province_or_state"]) for r, x in rows.items()} == {
        "us-east-1": ("US", "Virginia"), "europe-central-1": ("DE", None),
        "asia-northeast-1": ("JP", "Tokyo")}
    assert rows["us-east-1"]["price_per_gpu_hour_usd"] == Decimal("3.990000")


def test_page_and_api_agree_on_prices(page_by_sku, api_by_key):
    for sku, region in api_by_key:
        api = api_by_key[sku, region]
        page = page_by_sku[api["vendor_data"]["description"]]
        assert Decimal(page["price_amount"]) == Decimal(api["price_amount"])


def test_api_error_body_fails_loudly(api_response):
    broken = api_response.replace(body=b'{"error": {"code": "global/invalid-api-key"}}')
    with pytest.raises(ValueError, match="lambda_cloud: no 'data' object"):
        list(spider.parse_api(broken))


def test_offer_invariants(offer):
    assert Decimal(offer["price_amount"]) > 0
    assert offer["offer_kind"] == "on_demand" and offer["vendor"] == "Lambda"
    assert offer["gpu_count"] in (1, 2, 4, 8)
    row = normalize_offer(offer)
    assert row["gpu_model"] in ("A100-40GB", "A100-80GB", "H100-80GB", "A10-24GB", "GH200-96GB",
                                "B200-180GB") and row["gpu_fraction"] == 1


def test_offers_are_unique(page_offers, api_offers):
    for offers in (page_offers, api_offers):
        keys = [(o["sku"], o["region_text"]) for o in offers]
        assert len(keys) == len(set(keys))
