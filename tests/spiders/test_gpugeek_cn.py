"""GpuGeek product list API: parse the two recorded pages once, then many small checks.

The snapshot holds A800 and L40S machines (cards outside the four mission families, kept as
observations) and an 8-card H800 with no monthly price (skipped here)."""

import functools
from decimal import Decimal

import pytest

from pipelines.normalize import normalize_offer
from spiders.parsing.machine import machine_specs
from spiders.vendors.gpugeek_cn import GpugeekCNSpider
from tests.helpers.responses import file_response

spider = GpugeekCNSpider(crawl_id="test")
OTHER_CARDS = {"A800": "A800-80GB", "L40S": "L40S-48GB"}   # not mission cards, still kept


def recorded_pages() -> list:
    return [file_response("gpugeek_cn", f"gpu_list_page{n}.json") for n in (1, 2)]


@functools.cache
def parsed() -> list[list]:
    """What the spider yields for each recorded page (offers, the next-page request), parsed
    once (collection needs it too: one test per offer)."""
    return [list(spider.parse(page)) for page in recorded_pages()]


def offers_of(outputs: list[list]) -> list[dict]:
    return [dict(o) for out in outputs for o in out if not hasattr(o, "callback")]


@pytest.fixture(scope="module")
def pages() -> list:
    return recorded_pages()


@pytest.fixture(scope="module")
def items(pages) -> list[dict]:
    return [item for page in pages for item in page.json()["data"]["list"]]


@pytest.fixture(scope="module")
def next_requests() -> list[list]:
    return [[r for r in out if hasattr(r, "callback")] for out in parsed()]


@pytest.fixture(scope="module")
def offers() -> list[dict]:
    return offers_of(parsed())


def pytest_generate_tests(metafunc):
    """The tests taking `offer` run once per recorded offer (collection needs the list)."""
    if metafunc.function.__name__ == "test_other_cards_are_kept":
        metafunc.parametrize("offer", [o for o in offers_of(parsed())
                                       if any(u in o["gpu_text"] for u in OTHER_CARDS)],
                             ids=lambda o: f"{o['sku']}-{o['billing_period']}")


def by(offers: list[dict], sku: str) -> dict[str, dict]:
    return {o["billing_period"]: o for o in offers if o["sku"] == sku}


def test_follows_the_next_link_once(next_requests):
    page2 = "https://api.gpugeek.com/api/product/gpu/list?page=2&page_size=20"
    assert [r.url for r in next_requests[0]] == [page2]
    assert next_requests[1] == []


def test_every_machine_and_listed_term_is_an_offer(offers, items, pages):
    assert len(items) == pages[0].json()["data"]["total"] == 29
    listed = sum(1 for i in items for f in ("price_hour", "price_day", "price_month") if i[f])
    assert len(offers) == listed == 86


def test_first_offer_fields(offers):
    first = offers[0]
    assert first["sku"] == "20411"
    assert first["gpu_text"] == "NVIDIA GeForce RTX 4090"
    assert first["vram_gb"] == "24GB"
    assert first["gpu_count"] == 1
    assert first["region_text"] == "宿迁一区"
    assert first["offer_kind"] == "on_demand"
    assert (first["price_amount"], first["currency"]) == ("1.98", "CNY")
    assert first["billing_period"] == "hour"
    assert "price_text" not in first   # the API serves a number: no text is written from it
    assert first["available"] is True
    assert first["url"] == "https://api.gpugeek.com/api/product/gpu/list?page=1&page_size=20"


def test_page_two_offers_point_at_page_two(offers):
    h800 = by(offers, "20433")  # 8x H800 in 贵安一区, on page 2
    assert h800["hour"]["url"].endswith("page=2&page_size=20")
    assert {p: o["price_amount"] for p, o in h800.items()} == {
        "hour": "94.94", "day": "2089", "month": "60762"}


def test_eight_card_machines_are_priced_per_machine(offers):
    row = normalize_offer(by(offers, "20419")["hour"])  # 8x H800 宿迁一区 at ¥114.08/h per machine
    assert row["gpu_model"] == "H800-80GB" and row["gpu_count"] == 8
    assert row["price_amount"] == Decimal("114.08")
    assert row["price_per_gpu_hour_cny"] == Decimal("14.260000")


@pytest.mark.parametrize("sku, vcpus, memory_gib", [
    ("20411", 16, 64),      # 1x RTX 4090
    ("20419", 128, 960),    # 8x H800: the machine's, like its price
])
def test_machines_state_vcpus_memory_and_system_disk(sku, vcpus, memory_gib, offers):
    for o in by(offers, sku).values():
        assert (o["vcpus_text"], o["memory_text"], o["disk_text"]) == (
            str(vcpus), f"{memory_gib} GB", "系统盘 50 GB")
        assert machine_specs(o) == {"vcpus": vcpus, "memory_gib": memory_gib, "disk_gb": 50}


def test_product_without_machine_fields_states_none(items, pages):
    bare = {k: v for k, v in items[0].items()
            if k not in ("cpu_num", "memory_gb", "system_disk_gb")}
    for offer in spider.parse_offer(bare, pages[0]):
        assert not {"vcpus_text", "memory_text", "disk_text"} & set(offer)
        assert machine_specs(offer) == {"vcpus": None, "memory_gib": None, "disk_gb": None}


def test_monthly_price_null_is_skipped(offers):
    # 8x H800 庆阳一区: monthly is "contact sales"
    assert sorted(by(offers, "20427")) == ["day", "hour"]


def test_idle_zero_means_sold_out(offers):
    assert {o["sku"] for o in offers if o["available"] is False} == {"20414", "20432", "20439"}


def test_4090d_is_kept_apart_from_4090(offers):
    d = normalize_offer(by(offers, "20415")["hour"])
    plain = normalize_offer(by(offers, "20411")["hour"])
    assert (d["gpu_model"], plain["gpu_model"]) == ("RTX4090D-24GB", "RTX4090-24GB")


def test_48gb_4090_is_its_own_model(offers):
    assert normalize_offer(by(offers, "20431")["month"])["gpu_model"] == "RTX4090-48GB"


def test_a100_variants_from_the_nvidia_names(offers):
    assert normalize_offer(by(offers, "20422")["hour"])["gpu_variant"] == "PCIe"
    row = normalize_offer(by(offers, "20426")["month"])
    assert (row["gpu_model"], row["gpu_variant"], row["gpu_count"]) == ("A100-80GB", "SXM", 8)


def test_other_cards_are_kept(offer):
    family = next(u for u in OTHER_CARDS if u in offer["gpu_text"])
    assert normalize_offer(offer)["gpu_model"] == OTHER_CARDS[family]


def test_regions_span_four_provinces(offers):
    rows = [normalize_offer(o) for o in offers if not any(u in o["gpu_text"] for u in OTHER_CARDS)]
    assert len(rows) == 80
    assert {r["province_or_state"] for r in rows} == {"Jiangsu", "Gansu", "Guizhou", "Guangdong"}
    assert {r["region_code"] for r in rows} == {"宿迁一区", "庆阳一区", "贵安一区", "东莞一区"}


def test_every_offer_is_yuan_by_the_hour_day_or_month_for_whole_machines(offers):
    for offer in offers:
        assert offer["currency"] == "CNY"
        assert offer["billing_period"] in ("hour", "day", "month")
        assert offer["gpu_count"] in (1, 2, 4, 8)


def test_the_guess_is_said_where_people_read_it():
    """No evidence of this endpoint exists: the path note, the manifest and sources.md say so."""
    import json

    from spiders.layout import REPO_ROOT, SNAPSHOT_DIR

    assert GpugeekCNSpider.path_note().startswith("a guess: ")
    meta = json.loads((SNAPSHOT_DIR / "gpugeek_cn" / "manifest.json").read_text(encoding="utf-8"))
    assert meta["verification"] == "unverified" and meta["price_basis"] == "illustrative"
    assert any(u.startswith("A guess, not evidence") for u in meta["unverified"])
    row = next(line for line in (REPO_ROOT / "docs" / "sources.md").read_text(
        encoding="utf-8").splitlines() if line.startswith("| `gpugeek_cn` |"))
    assert "guess" in row and "LLM gateway" in row
