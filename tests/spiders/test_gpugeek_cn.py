"""GpuGeek product list API: parse the two recorded pages once, then many small checks.

The snapshot holds A800 and L40S machines (cards outside the four mission families, kept as
observations) and an 8-card H800 with no monthly price (skipped here)."""

from decimal import Decimal

import pytest

from pipelines.normalize import normalize_offer
from spiders.vendors.gpugeek_cn import GpugeekCNSpider
from tests.conftest import file_response

spider = GpugeekCNSpider(crawl_id="test")
PAGES = [file_response("gpugeek_cn", f"gpu_list_page{n}.json") for n in (1, 2)]
OUTPUTS = [list(spider.parse(page)) for page in PAGES]
NEXT = [[r for r in out if hasattr(r, "callback")] for out in OUTPUTS]
OFFERS = [dict(o) for out in OUTPUTS for o in out if not hasattr(o, "callback")]
ITEMS = [item for page in PAGES for item in page.json()["data"]["list"]]
OTHER_CARDS = {"A800": "A800-80GB", "L40S": "L40S-48GB"}   # not mission cards, still kept


def by(sku: str) -> dict[str, dict]:
    return {o["billing_period"]: o for o in OFFERS if o["sku"] == sku}


def test_follows_the_next_link_once():
    page2 = "https://api.gpugeek.com/api/product/gpu/list?page=2&page_size=20"
    assert [r.url for r in NEXT[0]] == [page2]
    assert NEXT[1] == []


def test_every_machine_and_listed_term_is_an_offer():
    assert len(ITEMS) == PAGES[0].json()["data"]["total"] == 29
    listed = sum(1 for i in ITEMS for f in ("price_hour", "price_day", "price_month") if i[f])
    assert len(OFFERS) == listed == 86


def test_first_offer_fields():
    first = OFFERS[0]
    assert first["sku"] == "20411"
    assert first["gpu_text"] == "NVIDIA GeForce RTX 4090"
    assert first["vram_gb"] == "24GB"
    assert first["gpu_count"] == 1
    assert first["region_text"] == "宿迁一区"
    assert first["offer_kind"] == "on_demand"
    assert (first["price_amount"], first["currency"]) == ("1.98", "CNY")
    assert first["billing_period"] == "hour"
    assert first["price_text"] == "¥1.98/时"
    assert first["available"] is True
    assert first["url"] == "https://api.gpugeek.com/api/product/gpu/list?page=1&page_size=20"
    assert first["observed_at"] == "2026-11-30T09:00:00Z"


def test_page_two_offers_point_at_page_two():
    h800 = by("20433")  # 8x H800 in 贵安一区, on page 2
    assert h800["hour"]["url"].endswith("page=2&page_size=20")
    assert {p: o["price_amount"] for p, o in h800.items()} == {
        "hour": "94.94", "day": "2089", "month": "60762"}


def test_eight_card_machines_are_priced_per_machine():
    row = normalize_offer(by("20419")["hour"])  # 8x H800 宿迁一区 at ¥114.08/h per machine
    assert row["gpu_model"] == "H800-80GB" and row["gpu_count"] == 8
    assert row["price_amount"] == Decimal("114.08")
    assert row["price_per_gpu_hour_cny"] == Decimal("14.260000")


def test_monthly_price_null_is_skipped():
    assert sorted(by("20427")) == ["day", "hour"]  # 8x H800 庆阳一区: monthly is "contact sales"


def test_idle_zero_means_sold_out():
    assert {o["sku"] for o in OFFERS if o["available"] is False} == {"20414", "20432", "20439"}


def test_4090d_is_kept_apart_from_4090():
    d = normalize_offer(by("20415")["hour"])
    plain = normalize_offer(by("20411")["hour"])
    assert (d["gpu_model"], plain["gpu_model"]) == ("RTX4090D-24GB", "RTX4090-24GB")


def test_48gb_4090_is_its_own_model():
    assert normalize_offer(by("20431")["month"])["gpu_model"] == "RTX4090-48GB"


def test_a100_variants_from_the_nvidia_names():
    assert normalize_offer(by("20422")["hour"])["gpu_variant"] == "PCIe"
    row = normalize_offer(by("20426")["month"])
    assert (row["gpu_model"], row["gpu_variant"], row["gpu_count"]) == ("A100-80GB", "SXM", 8)


@pytest.mark.parametrize("offer", [o for o in OFFERS
                                   if any(u in o["gpu_text"] for u in OTHER_CARDS)],
                         ids=lambda o: f"{o['sku']}-{o['billing_period']}")
def test_other_cards_are_kept(offer):
    family = next(u for u in OTHER_CARDS if u in offer["gpu_text"])
    assert normalize_offer(offer)["gpu_model"] == OTHER_CARDS[family]


def test_regions_span_four_provinces():
    rows = [normalize_offer(o) for o in OFFERS if not any(u in o["gpu_text"] for u in OTHER_CARDS)]
    assert len(rows) == 80
    assert {r["province_or_state"] for r in rows} == {"Jiangsu", "Gansu", "Guizhou", "Guangdong"}
    assert {r["region_code"] for r in rows} == {"宿迁一区", "庆阳一区", "贵安一区", "东莞一区"}


@pytest.mark.parametrize("offer", OFFERS, ids=lambda o: f"{o['sku']}-{o['billing_period']}")
def test_offer_invariants(offer):
    assert Decimal(offer["price_amount"]) > 0
    assert offer["currency"] == "CNY"
    assert offer["billing_period"] in ("hour", "day", "month")
    assert offer["gpu_count"] in (1, 2, 4, 8)
    assert offer["url"].startswith("https://api.gpugeek.com/api/product/gpu/list?page=")
    assert len(offer["raw_ref"]) == 64


def test_offers_are_unique():
    keys = [(o["sku"], o["billing_period"]) for o in OFFERS]
    assert len(keys) == len(set(keys))
