"""Vultr plan listings: parse the recorded cloud-GPU and bare-metal plans once, many checks."""

from decimal import Decimal

import pytest

from pipelines.lib.normalize import normalize_offer
from spiders.vendors.vultr import METAL_URL, PLANS_URL, VultrSpider
from tests.conftest import file_response

spider = VultrSpider(crawl_id="test")
PLANS = file_response("vultr", "plans.json")
METAL = file_response("vultr", "plans_metal.json")
OFFERS = list(spider.parse(PLANS)) + list(spider.parse(METAL))
BY_KEY = {(o["sku"], o["region_text"], o["offer_kind"], o["billing_period"]): o for o in OFFERS}


def test_offer_count():
    # A100 vGPU plans: (4 + 2 + 3 + 4 + 5 locations) x (hour, month);
    # 8x H100 metal: 1 location x (hour, month, preemptible hour, preemptible month);
    # 8x A100 metal: 2 locations x (hour, month)
    assert len(OFFERS) == 36 + 4 + 4 == 44


def test_cpu_and_untracked_gpu_plans_are_skipped():
    skus = {o["sku"] for o in OFFERS}
    assert not skus & {"vc2-1c-1gb", "vcg-a40-2c-10g-8vram", "vcg-l40s-16c-180g-48vram",
                       "vbm-4c-32gb"}
    assert len(skus) == 7


def test_smallest_slice_hourly_and_monthly():
    hour = BY_KEY["vcg-a100-1c-6g-4vram", "ewr", "on_demand", "hour"]
    month = BY_KEY["vcg-a100-1c-6g-4vram", "ewr", "on_demand", "month"]
    assert (hour["price_amount"], hour["price_text"]) == ("0.123", "$0.123/hr")
    assert (month["price_amount"], month["price_text"]) == ("90", "$90/mo")
    assert hour["gpu_text"] == "A100 80GB vGPU 4GB" and hour["vram_gb"] == 4
    assert hour["currency"] == "USD" and hour["gpu_count"] == 1


@pytest.mark.parametrize("sku, fraction", [
    ("vcg-a100-1c-6g-4vram", "0.05"), ("vcg-a100-2c-15g-10vram", "0.125"),
    ("vcg-a100-3c-30g-20vram", "0.25"), ("vcg-a100-6c-60g-40vram", "0.5"),
    ("vcg-a100-12c-120g-80vram", "1"),
])
def test_slices_are_vram_over_80(sku, fraction):
    row = normalize_offer(BY_KEY[sku, "ewr", "on_demand", "hour"])
    assert row["gpu_model"] == "A100-80GB"
    assert row["gpu_fraction"] == Decimal(fraction)


def test_the_one_twentieth_slice_is_accepted_as_0_05():
    # Spelled as a fraction the parser does not take it ("1/20" is not read as a fraction, and
    # with the 4 GB hint it is refused as a contradiction); named by its memory it is 4/80.
    row = normalize_offer(BY_KEY["vcg-a100-1c-6g-4vram", "nrt", "on_demand", "hour"])
    assert row["vram_gb"] == Decimal("4")
    assert row["price_per_gpu_hour_usd"] == Decimal("2.460000")


def test_half_card_prices():
    hour = BY_KEY["vcg-a100-6c-60g-40vram", "sgp", "on_demand", "hour"]
    month = BY_KEY["vcg-a100-6c-60g-40vram", "sgp", "on_demand", "month"]
    assert (hour["price_amount"], month["price_amount"]) == ("1.397", "800")


def test_whole_card_plan():
    o = BY_KEY["vcg-a100-12c-120g-80vram", "ams", "on_demand", "hour"]
    assert (o["gpu_text"], o["price_amount"]) == ("A100 80GB", "2.397")
    assert BY_KEY["vcg-a100-12c-120g-80vram", "ams", "on_demand", "month"]["price_amount"] == "1750"


def test_h100_bare_metal_has_preemptible_spot_prices():
    got = {(k, p): o["price_amount"] for (s, r, k, p), o in BY_KEY.items()
           if s == "vbm-112c-2048gb-8-h100-gpu"}
    assert got == {("on_demand", "hour"): "23.92", ("on_demand", "month"): "16074.24",
                   ("spot", "hour"): "18.4", ("spot", "month"): "12364.8"}
    o = BY_KEY["vbm-112c-2048gb-8-h100-gpu", "sea", "spot", "hour"]
    assert (o["gpu_text"], o["gpu_count"], o["url"]) == ("H100 80GB SXM5", 8, METAL_URL)
    assert normalize_offer(o)["price_per_gpu_hour_usd"] == Decimal("2.300000")


def test_a100_bare_metal_without_preemptible_price_has_no_spot_offer():
    kinds = {(k, p) for (s, r, k, p) in BY_KEY if s == "vbm-64c-2048gb-8-a100-gpu"}
    assert kinds == {("on_demand", "hour"), ("on_demand", "month")}


def test_locations_resolve():
    row = normalize_offer(BY_KEY["vcg-a100-12c-120g-80vram", "nrt", "on_demand", "month"])
    assert (row["country"], row["city"], row["billing_period"]) == ("JP", "Tokyo", "month")


def test_follows_a_next_page_cursor():
    paged = PLANS.replace(body=PLANS.body.replace(b'"next": ""', b'"next": "bmV4dF9fdmNn"'))
    [follow] = [r for r in spider.parse(paged) if hasattr(r, "callback")]
    assert follow.url == f"{PLANS_URL}&cursor=bmV4dF9fdmNn"


def test_missing_list_fails_loudly():
    with pytest.raises(ValueError, match="vultr: no list 'plans_metal'"):
        list(spider.parse(METAL.replace(body=b'{"error": "rate limited"}')))


@pytest.mark.parametrize("offer", OFFERS, ids=lambda o: "-".join(
    (o["sku"], o["region_text"], o["offer_kind"], o["billing_period"])))
def test_offer_invariants(offer):
    assert Decimal(offer["price_amount"]) > 0
    assert offer["billing_period"] in ("hour", "month")
    assert offer["offer_kind"] == "on_demand" or offer["sku"].startswith("vbm-")
    assert offer["url"] in (PLANS_URL, METAL_URL)
    normalize_offer(offer)  # raises Quarantined if the offer would not normalize


def test_offers_are_unique():
    assert len(BY_KEY) == len(OFFERS)
