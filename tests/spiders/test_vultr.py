"""Vultr plan listings: parse the recorded cloud-GPU and bare-metal plans once, many checks."""

from decimal import Decimal

import pytest
from scrapy.utils.test import get_crawler

from pipelines.normalize import Quarantined, normalize_offer
from spiders.parsing.machine import machine_specs
from spiders.vendors.vultr import METAL_URL, PLANS_URL, VultrSpider, cloud_gpu
from tests.helpers.responses import file_response

crawler = get_crawler(VultrSpider)
spider = VultrSpider.from_crawler(crawler, crawl_id="test")


@pytest.fixture(scope="module")
def plans():
    return file_response("vultr", "plans.json")


@pytest.fixture(scope="module")
def metal():
    return file_response("vultr", "plans_metal.json")


@pytest.fixture(scope="module")
def offers(plans, metal) -> list[dict]:
    """The offers of both recorded plan lists."""
    return [*spider.parse(plans), *spider.parse(metal)]


@pytest.fixture(scope="module")
def by_key(offers) -> dict[tuple, dict]:
    return {(o["sku"], o["region_text"], o["offer_kind"], o["billing_period"]): o for o in offers}


def test_offer_count(offers):
    # A100 vGPU plans: (4 + 2 + 3 + 4 + 5 locations) x (hour, month);
    # A40 slice and L40S: (2 + 2 locations) x (hour, month);
    # 8x H100 metal: 1 location x (hour, month, preemptible hour, preemptible month);
    # 8x A100 metal: 2 locations x (hour, month)
    assert len(offers) == 36 + 8 + 4 + 4 == 52


def test_every_gpu_plan_is_kept_and_only_cpu_plans_are_skipped_and_counted(offers):
    skus = {o["sku"] for o in offers}
    assert {"vcg-a40-2c-10g-8vram", "vcg-l40s-16c-180g-48vram"} <= skus
    assert not skus & {"vc2-1c-1gb", "vbm-4c-32gb"}
    assert len(skus) == 9
    assert crawler.stats.get_value("vultr/cpu_plans_skipped") == 2


def test_a40_slice_and_l40s_card_normalize(by_key):
    a40 = normalize_offer(by_key["vcg-a40-2c-10g-8vram", "ewr", "on_demand", "hour"])
    assert (a40["gpu_model"], a40["gpu_fraction"], a40["vram_gb"]) == (
        "A40-48GB", Decimal(8) / Decimal(48), Decimal(8))
    l40s = by_key["vcg-l40s-16c-180g-48vram", "ewr", "on_demand", "hour"]
    assert (l40s["gpu_text"], l40s["plan_vram"], l40s["price_amount"]) == ("L40S", 48, "1.671")
    row = normalize_offer(l40s)
    assert (row["gpu_model"], row["gpu_fraction"], row["gpu_count"]) == ("L40S-48GB", 1, 1)


@pytest.mark.parametrize("gpu_type, vram, expected", [
    # the plan's whole GPU memory as served; normalization reads slice or count from it
    ("NVIDIA_A100", 4, {"gpu_text": "A100", "plan_vram": 4, "plan_vram_unit": "GB"}),
    ("NVIDIA_L40S", 96, {"gpu_text": "L40S", "plan_vram": 96, "plan_vram_unit": "GB"}),
    ("NVIDIA_GH200", None, {"gpu_text": "GH200", "gpu_count": 1}),   # no memory: one card
])
def test_cloud_gpu_hands_the_plan_memory_as_served(gpu_type, vram, expected):
    assert cloud_gpu(gpu_type, vram) == expected


@pytest.mark.parametrize("plan, stage", [
    ({"gpu_type": "NVIDIA_A16", "gpu_vram_gb": 2}, "card"),     # unknown card: says so
    ({"gpu_type": "NVIDIA_L40S", "gpu_vram_gb": 72}, "card"),   # 72 GB is no L40S plan
])
def test_gpu_plans_that_cannot_be_read_reach_quarantine_with_a_reason(plan, stage, plans):
    full = {"id": "vcg-x", "type": "vcg", "hourly_cost": 0.5, "locations": ["ewr"], **plan}
    [offer] = [o for o in spider.parse_offer(full, plans) if o["billing_period"] == "hour"]
    with pytest.raises(Quarantined) as caught:
        normalize_offer(offer)
    assert caught.value.stage == stage


def test_metal_plan_without_a_count_is_one_card_of_any_model(metal):
    plan = {"id": "vbm-72c-480gb-gh200-gpu", "hourly_cost": 2.99, "locations": ["ewr"]}
    [offer] = spider.parse_offer(plan, metal)
    assert (offer["gpu_text"], offer["gpu_count"]) == ("GH200", 1)
    assert normalize_offer(offer)["gpu_model"] == "GH200-96GB"


def test_smallest_slice_hourly_and_monthly(by_key):
    hour = by_key["vcg-a100-1c-6g-4vram", "ewr", "on_demand", "hour"]
    month = by_key["vcg-a100-1c-6g-4vram", "ewr", "on_demand", "month"]
    assert (hour["price_amount"], month["price_amount"]) == ("0.123", "90")
    assert "price_text" not in hour   # the API serves a number: no text is written from it
    assert (hour["gpu_text"], hour["plan_vram"], hour["plan_vram_unit"]) == ("A100", 4, "GB")
    assert hour["currency"] == "USD"
    row = normalize_offer(hour)
    assert (row["gpu_model"], row["gpu_fraction"], row["vram_gb"], row["gpu_count"]) == (
        "A100-80GB", Decimal("0.05"), 4, 1)


@pytest.mark.parametrize("sku, fraction", [
    ("vcg-a100-1c-6g-4vram", "0.05"), ("vcg-a100-2c-15g-10vram", "0.125"),
    ("vcg-a100-3c-30g-20vram", "0.25"), ("vcg-a100-6c-60g-40vram", "0.5"),
    ("vcg-a100-12c-120g-80vram", "1"),
])
def test_slices_are_vram_over_80(sku, fraction, by_key):
    row = normalize_offer(by_key[sku, "ewr", "on_demand", "hour"])
    assert row["gpu_model"] == "A100-80GB"
    assert row["gpu_fraction"] == Decimal(fraction)


def test_the_one_twentieth_slice_is_accepted_as_0_05(by_key):
    # Spelled as a fraction the parser does not take it ("1/20" is not read as a fraction, and
    # with the 4 GB hint it is refused as a contradiction); named by its memory it is 4/80.
    row = normalize_offer(by_key["vcg-a100-1c-6g-4vram", "nrt", "on_demand", "hour"])
    assert row["vram_gb"] == Decimal("4")
    assert row["price_per_gpu_hour_usd"] == Decimal("2.460000")


def test_half_card_prices(by_key):
    hour = by_key["vcg-a100-6c-60g-40vram", "sgp", "on_demand", "hour"]
    month = by_key["vcg-a100-6c-60g-40vram", "sgp", "on_demand", "month"]
    assert (hour["price_amount"], month["price_amount"]) == ("1.397", "800")


def test_whole_card_plan(by_key):
    o = by_key["vcg-a100-12c-120g-80vram", "ams", "on_demand", "hour"]
    assert (o["gpu_text"], o["plan_vram"], o["price_amount"]) == ("A100", 80, "2.397")
    assert normalize_offer(o)["gpu_model"] == "A100-80GB"
    assert by_key["vcg-a100-12c-120g-80vram", "ams", "on_demand", "month"]["price_amount"] == "1750"


def test_h100_bare_metal_has_preemptible_spot_prices(by_key):
    got = {(k, p): o["price_amount"] for (s, r, k, p), o in by_key.items()
           if s == "vbm-112c-2048gb-8-h100-gpu"}
    assert got == {("on_demand", "hour"): "23.92", ("on_demand", "month"): "16074.24",
                   ("spot", "hour"): "18.4", ("spot", "month"): "12364.8"}
    o = by_key["vbm-112c-2048gb-8-h100-gpu", "sea", "spot", "hour"]
    assert (o["gpu_text"], o["gpu_count"], o["url"]) == ("H100 80GB SXM5", 8, METAL_URL)
    assert normalize_offer(o)["price_per_gpu_hour_usd"] == Decimal("2.300000")


def test_a100_bare_metal_without_preemptible_price_has_no_spot_offer(by_key):
    kinds = {(k, p) for (s, r, k, p) in by_key if s == "vbm-64c-2048gb-8-a100-gpu"}
    assert kinds == {("on_demand", "hour"), ("on_demand", "month")}


@pytest.mark.parametrize("sku, texts, specs", [
    # a vGPU slice: the VM's own vCPUs, RAM (MB, as served) and one disk
    ("vcg-a100-1c-6g-4vram", (1, 6144, "MB", "70 GB"), (1, 6, 70)),
    ("vcg-l40s-16c-180g-48vram", (16, 184320, "MB", "1200 GB"), (16, 180, 1200)),
    # bare metal: threads (not the 112 cores), 2 TiB of RAM, two NVMe disks
    ("vbm-112c-2048gb-8-h100-gpu", (224, 2097152, "MB", "2 x 960 GB NVMe"),
     (224, 2048, 1920)),
])
def test_plans_state_their_machine(sku, texts, specs, offers):
    mine = [o for o in offers if o["sku"] == sku]
    assert {(o["vcpus"], o["memory"], o["memory_unit"], o["disk_text"]) for o in mine} == {texts}
    assert machine_specs(mine[0]) == dict(zip(("vcpus", "memory_gib", "disk_gb"), specs,
                                              strict=True))


def test_plan_without_machine_fields_states_none(metal):
    plan = {"id": "vbm-72c-480gb-gh200-gpu", "hourly_cost": 2.99, "locations": ["ewr"]}
    [offer] = spider.parse_offer(plan, metal)
    assert not {"vcpus", "memory", "disk_text"} & set(offer)
    assert machine_specs(offer) == {"vcpus": None, "memory_gib": None, "disk_gb": None}


def test_locations_resolve(by_key):
    row = normalize_offer(by_key["vcg-a100-12c-120g-80vram", "nrt", "on_demand", "month"])
    assert (row["country"], row["city"], row["billing_period"]) == ("JP", "Tokyo", "month")


def test_follows_a_next_page_cursor(plans):
    paged = plans.replace(body=plans.body.replace(b'"next": ""', b'"next": "bmV4dF9fdmNn"'))
    [follow] = [r for r in spider.parse(paged) if hasattr(r, "callback")]
    assert follow.url == f"{PLANS_URL}&cursor=bmV4dF9fdmNn"


def test_missing_list_fails_loudly(metal):
    with pytest.raises(ValueError, match="vultr: no list at 'plans_metal'"):
        list(spider.parse(metal.replace(body=b'{"error": "rate limited"}')))


def test_every_offer_is_hourly_or_monthly_and_only_metal_is_preemptible(offers):
    for offer in offers:
        assert offer["billing_period"] in ("hour", "month")
        assert offer["offer_kind"] == "on_demand" or offer["sku"].startswith("vbm-")
