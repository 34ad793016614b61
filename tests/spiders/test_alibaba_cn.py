"""Alibaba Cloud ECS GPU prices: a hash-routed JavaScript page. Without a browser the table does not
exist; with Chromium (over the replay server, the page's XHR included) it yields one offer per
price cell. The snapshot holds an A10 (gn7i) row that normalization keeps as an A10-24GB card,
'—' spot cells the spider must skip, and a sold-out row."""

import functools
import json
from decimal import Decimal

import pytest

from pipelines.normalize import normalize_offer
from spiders.layout import SNAPSHOT_DIR
from spiders.vendors.alibaba_cn import AlibabaCNSpider
from tests.helpers.crawl import run_crawl
from tests.helpers.responses import file_response

PAGE_URL = "https://www.aliyun.com/price/product#/ecs/gpu"


@functools.cache
def recorded_instances() -> list[dict]:
    """The instances of the recorded XHR answer, read once (collection needs them too: one test
    per instance)."""
    return json.loads((SNAPSHOT_DIR / "alibaba_cn" / "gpu_instances.json")
                      .read_text(encoding="utf-8"))["data"]["instances"]


@pytest.fixture(scope="module")
def instances() -> list[dict]:
    return recorded_instances()


def pytest_generate_tests(metafunc):
    """The tests taking `instance` run once per recorded instance (collection needs the list)."""
    if metafunc.function.__name__ == "test_every_json_price_is_one_offer":
        metafunc.parametrize("instance", recorded_instances(),
                             ids=lambda i: f"{i['instanceType']}-{i['regionId']}")


def test_unrendered_shell_has_no_table_and_says_so():
    shell = file_response("alibaba_cn", "price_product.html")
    with pytest.raises(ValueError, match=r"alibaba_cn: table headers .* not found"):
        list(AlibabaCNSpider(crawl_id="t").parse(shell))


@pytest.fixture(scope="module")
def crawl(replay_server, tmp_path_factory):
    return run_crawl("alibaba_cn", replay_server.url, tmp_path_factory.mktemp("alibaba"))


@pytest.fixture(scope="module")
def offers(crawl):
    return crawl[0]


def by(offers, sku, region):
    return {(o["offer_kind"], o["billing_period"]): o for o in offers
            if o["sku"] == sku and o["region_text"] == region}


def test_crawl_passes_its_monitor(crawl):
    _, verdict = crawl
    assert verdict["passed"], verdict["failures"]


def test_offer_count(offers, instances):
    # 18 rows x (hourly, monthly) + 13 rows with a spot price; '—' cells yield nothing.
    priced = sum(v is not None for i in instances for v in i["price"].values())
    assert len(offers) == priced == 49


def test_beijing_a100_80gb_prices_are_the_page_text(offers):
    row = by(offers, "ecs.gn7e-c16g1.4xlarge", "华北2（北京）")
    assert {k: o["price_text"] for k, o in row.items()} == {
        ("on_demand", "hour"): "¥34.74/小时",
        ("on_demand", "month"): "¥17,500.00/月",
        ("spot", "hour"): "¥8.62/小时",
    }


def test_first_offer_fields(offers):
    first = offers[0]
    assert first["sku"] == "ecs.gn7e-c16g1.4xlarge"
    assert first["gpu_text"] == "NVIDIA A100 80GB"
    assert first["gpu_count"] == "1"
    assert first["region_text"] == "华北2（北京）"
    assert first["offer_kind"] == "on_demand"
    assert first["billing_period"] == "hour"
    assert first["available"] is True
    assert first["vendor"] == "阿里云 Alibaba Cloud"
    assert first["vendor_kind"] == "hyperscaler"
    assert first["observed_at"] == "2026-11-30T09:00:00Z"
    assert first["vendor_data"]["row"]["库存"] == "有货"


def test_no_spot_cell_yields_no_spot_offer(offers):
    assert set(by(offers, "ecs.gn7e-c16g1.4xlarge", "华南1（深圳）")) == {
        ("on_demand", "hour"), ("on_demand", "month")}
    bare_metal = [o for o in offers if o["sku"] == "ecs.ebmgn8v.48xlarge"]
    assert len(bare_metal) == 4 and {o["offer_kind"] for o in bare_metal} == {"on_demand"}


def test_sold_out_row_is_unavailable(offers):
    sold_out = by(offers, "ecs.gn7e-c16g1.32xlarge", "华东2（上海）")
    assert len(sold_out) == 3 and all(o["available"] is False for o in sold_out.values())
    assert sum(o["available"] is False for o in offers) == 3


def test_eight_gpu_instances_carry_their_count(offers):
    counts = {o["sku"]: o["gpu_count"] for o in offers}
    assert counts["ecs.gn7e-c16g1.32xlarge"] == "8"
    assert counts["ecs.ebmgn8v.48xlarge"] == "8"


def test_vgpu_rows_mark_the_slice_memory(offers):
    texts = {o["sku"]: o["gpu_text"] for o in offers if o["sku"].startswith("ecs.vgn7e")}
    assert texts == {"ecs.vgn7e-c4g1.xlarge": "NVIDIA A100 1/4 (vGPU 20GB)",
                     "ecs.vgn7e-c8g1.2xlarge": "NVIDIA A100 1/2 (vGPU 40GB)"}


def test_vgpu_slices_normalize_as_a100_80gb_fractions(offers):
    half_row = by(offers, "ecs.vgn7e-c8g1.2xlarge", "华北2（北京）")
    half = normalize_offer(half_row[("on_demand", "hour")])
    assert (half["gpu_model"], half["gpu_fraction"], half["vram_gb"]) == (
        "A100-80GB", Decimal("0.5"), 40)
    assert half["price_per_gpu_hour_cny"] == Decimal("39.000000")  # ¥19.50/h for half a card


def test_a10_rows_are_kept_as_a10_cards(offers):
    a10 = [normalize_offer(o) for o in offers if o["sku"] == "ecs.gn7i-c8g1.2xlarge"]
    assert len(a10) == 3
    assert {(r["gpu_model"], r["gpu_fraction"]) for r in a10} == {("A10-24GB", 1)}


def test_regions_resolve_to_six_provinces(offers):
    rows = [normalize_offer(o) for o in offers if o["sku"] != "ecs.gn7i-c8g1.2xlarge"]
    assert {r["region_code"] for r in rows} == {"cn-beijing", "cn-shanghai", "cn-hangzhou",
                                               "cn-shenzhen", "cn-zhangjiakou", "cn-wulanchabu"}
    assert {r["province_or_state"] for r in rows} == {"Beijing", "Shanghai", "Zhejiang",
                                                      "Guangdong", "Hebei", "Inner Mongolia"}


def test_xhr_json_is_archived_and_offers_point_at_the_page(crawl):
    offers, verdict = crawl
    assert any(f["url"] == "https://www.aliyun.com/api/price/gpu-instances?product=ecs&category=gpu"
                          "&lang=zh-CN" for f in verdict["fetches"])
    assert {o["url"] for o in offers} == {PAGE_URL}


def test_every_json_price_is_one_offer(offers, instance):
    row = by(offers, instance["instanceType"], instance["regionName"])
    columns = {"payAsYouGo": ("on_demand", "hour"), "subscription": ("on_demand", "month"),
               "spot": ("spot", "hour")}
    expected = {columns[k] for k, v in instance["price"].items() if v is not None}
    assert set(row) == expected
    for (kind, period), offer in row.items():
        field = next(k for k, v in columns.items() if v == (kind, period))
        amount = Decimal(offer["price_text"].lstrip("¥").split("/")[0].replace(",", ""))
        assert amount == Decimal(str(instance["price"][field]))
        assert offer["price_text"].endswith("/小时" if period == "hour" else "/月")
        assert offer["gpu_count"] == str(instance["gpuAmount"])
        assert len(offer["raw_ref"]) == 64


def test_offers_are_unique(offers):
    keys = [(o["sku"], o["region_text"], o["offer_kind"], o["billing_period"]) for o in offers]
    assert len(keys) == len(set(keys))
