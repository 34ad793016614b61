"""矩池云 price list: parse the recorded page once (one offer per table row), then many checks.

The snapshot holds RTX 3090 and L40S rows (outside the four mission families, still kept) and a
包月 row whose price cell says 售罄, which normalization quarantines with its reason."""

import functools
from decimal import Decimal

import pytest
from scrapy.http import HtmlResponse

from pipelines.normalize import Quarantined, normalize_offer
from spiders.parsing.machine import machine_specs
from spiders.vendors.matpool_cn import MatpoolCNSpider
from tests.helpers.responses import file_response

spider = MatpoolCNSpider(crawl_id="test")
OTHER_CARDS = {"RTX 3090": "RTX3090-24GB", "L40S": "L40S-48GB"}   # not mission cards, kept


@functools.cache
def parsed() -> list[dict]:
    """The offers of the recorded page, parsed once (collection needs them too: one test per
    offer)."""
    return list(spider.parse(file_response("matpool_cn", "host_market_gpu.html")))


@pytest.fixture(scope="module")
def page():
    return file_response("matpool_cn", "host_market_gpu.html")


@pytest.fixture(scope="module")
def offers() -> list[dict]:
    return [dict(o) for o in parsed()]


def pytest_generate_tests(metafunc):
    """The tests taking `offer` run once per recorded offer (collection needs the list)."""
    if metafunc.function.__name__ == "test_other_cards_are_kept":
        metafunc.parametrize("offer", [dict(o) for o in parsed()
                                       if any(u in o["gpu_text"] for u in OTHER_CARDS)],
                             ids=lambda o: f"{o['gpu_text']}-{o['billing_period']}")
    elif metafunc.function.__name__ == "test_offer_invariants":
        metafunc.parametrize(
            "offer", [dict(o) for o in parsed()],
            ids=lambda o: f"{o['region_text']}-{o['sku']}-{o['billing_period']}")


def find(offers: list[dict], region: str, gpu: str, vram: str, period: str) -> dict:
    (hit,) = [o for o in offers if (o["region_text"], o["gpu_text"], o["vram_gb"],
                                    o["billing_period"]) == (region, gpu, vram, period)]
    return hit


def test_one_offer_per_row(offers, page):
    assert len(offers) == len(page.css("table.price-table tbody tr")) == 30


def test_first_offer_fields(offers):
    first = offers[0]
    assert first["sku"] == "NVIDIA RTX 4090 24GB"
    assert (first["gpu_text"], first["vram_gb"]) == ("NVIDIA RTX 4090", "24GB")
    assert first["gpu_count"] == 1
    assert first["region_text"] == "杭州"
    assert (first["price_text"], first["billing_period"]) == ("¥2.39/时", "hour")
    assert first["offer_kind"] == "on_demand"
    assert first["available"] is True
    assert "price_amount" not in first and "currency" not in first  # read from the text
    assert first["url"] == "https://matpool.com/host-market/gpu"
    assert first["observed_at"] == "2026-11-30T09:00:00Z"


def test_unit_and_thousands_separator_in_one_cell(offers):
    row = normalize_offer(find(offers, "杭州", "NVIDIA RTX 4090", "24GB", "month"))
    assert (row["price_amount"], row["currency"]) == (Decimal("1399"), "CNY")
    assert row["billing_period"] == "month"


def test_weekly_term(offers):
    offer = find(offers, "北京", "NVIDIA A100", "40GB", "week")
    assert offer["price_text"] == "¥759/周"
    assert normalize_offer(offer)["gpu_model"] == "A100-40GB"
    assert {o["billing_period"] for o in offers} == {"hour", "day", "week", "month"}


def test_promotion_takes_the_current_price_and_the_term_column(offers):
    offer = find(offers, "张家口", "NVIDIA RTX 4090", "24GB", "hour")
    assert offer["price_text"] == "原价¥2.29 现价¥1.89"  # struck-through list price kept as written
    row = normalize_offer(offer)
    assert (row["price_amount"], row["billing_period"]) == (Decimal("1.89"), "hour")


def test_sold_out_term_is_seen_and_quarantined(offers):
    offer = find(offers, "北京", "NVIDIA A100", "80GB", "month")
    assert (offer["price_text"], offer["available"]) == ("售罄", False)
    with pytest.raises(Quarantined, match="sold out"):
        normalize_offer(offer)
    # 紧张 (scarce) is still in stock
    assert find(offers, "北京", "NVIDIA A100", "80GB", "hour")["available"] is True


def test_other_cards_are_kept(offer):
    family = next(u for u in OTHER_CARDS if u in offer["gpu_text"])
    assert normalize_offer(offer)["gpu_model"] == OTHER_CARDS[family]


def test_every_other_row_normalizes_across_three_provinces(offers):
    rows = [normalize_offer(o) for o in offers
            if not any(u in o["gpu_text"] for u in OTHER_CARDS) and o["price_text"] != "售罄"]
    assert len(rows) == 24
    assert {r["province_or_state"] for r in rows} == {"Zhejiang", "Beijing", "Hebei"}
    assert {r["gpu_model"] for r in rows} == {"RTX4090-24GB", "A100-40GB", "A100-80GB"}


def test_unknown_term_leaves_the_period_unset(page):
    html = page.text.replace("<td>按周</td>", "<td>按季</td>", 1)
    changed = HtmlResponse(url=page.url, body=html.encode(), encoding="utf-8")
    weird = [o for o in spider.parse(changed) if o["vendor_data"]["row"]["计费方式"] == "按季"]
    assert len(weird) == 1 and weird[0]["billing_period"] is None


def test_every_offer_carries_the_system_disk_the_page_says_prices_include(offers):
    # "价格为单卡价格，含系统盘 50GB": a disk, and no vCPUs or RAM, for every row
    assert {o["disk_text"] for o in offers} == {"系统盘 50GB"}
    assert all(machine_specs(o) == {"vcpus": None, "memory_gib": None, "disk_gb": 50}
               for o in offers)


def test_a_page_without_the_disk_note_states_no_disk(page):
    html = page.text.replace("含系统盘 50GB；", "")
    changed = HtmlResponse(url=page.url, body=html.encode(), encoding="utf-8")
    assert all(machine_specs(o)["disk_gb"] is None for o in spider.parse(changed))


def test_changed_layout_fails_loudly(page):
    html = page.text.replace("<th>计费方式</th>", "<th>计费</th>")
    changed = HtmlResponse(url=page.url, body=html.encode(), encoding="utf-8")
    with pytest.raises(ValueError, match=r"matpool_cn: table headers \['计费方式'\] not found"):
        list(spider.parse(changed))


def test_offer_invariants(offer):
    assert offer["price_text"].startswith(("¥", "原价¥")) or offer["price_text"] == "售罄"
    assert offer["billing_period"] in ("hour", "day", "week", "month")
    assert offer["region_text"] in ("杭州", "北京", "张家口")
    assert offer["available"] in (True, False)
    assert len(offer["raw_ref"]) == 64


def test_offers_are_unique(offers):
    keys = [(o["region_text"], o["sku"], o["billing_period"]) for o in offers]
    assert len(keys) == len(set(keys))
