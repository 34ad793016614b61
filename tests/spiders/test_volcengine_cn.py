"""Volcano Engine GPU price doc page: one static table per billing mode, bare numbers with the unit
in the header (parse once, many checks). The snapshot holds an A800 instance that normalization
keeps (an 8-card A800-80GB server) and a '联系商务' cell it must quarantine as 'not a price'."""

import functools
from decimal import Decimal

import pytest

from pipelines.normalize import Quarantined, normalize_offer
from spiders.vendors.volcengine_cn import VolcengineCNSpider
from tests.helpers.responses import file_response

spider = VolcengineCNSpider(crawl_id="test")


@functools.cache
def parsed() -> list[dict]:
    """The offers of the recorded page, parsed once (collection needs them too: one invariants
    test per offer)."""
    return list(spider.parse(file_response("volcengine_cn", "gpu_price_doc.html")))


@pytest.fixture(scope="module")
def page():
    return file_response("volcengine_cn", "gpu_price_doc.html")


@pytest.fixture(scope="module")
def offers() -> list[dict]:
    return parsed()


@pytest.fixture(scope="module")
def hourly(offers) -> list[dict]:
    return [o for o in offers if o["billing_period"] == "hour"]


@pytest.fixture(scope="module")
def monthly(offers) -> list[dict]:
    return [o for o in offers if o["billing_period"] == "month"]


def pytest_generate_tests(metafunc):
    """The tests taking `offer` run once per recorded offer (collection needs the list)."""
    if metafunc.function.__name__ == "test_offer_invariants":
        metafunc.parametrize(
            "offer", parsed(),
            ids=lambda o: f"{o['sku']}-{o['region_text']}-{o['billing_period']}")


def by(offers, sku, region):
    return {o["billing_period"]: o for o in offers
            if (o["sku"], o["region_text"]) == (sku, region)}


def test_one_offer_per_row_of_each_billing_table(offers, hourly, monthly):
    assert (len(hourly), len(monthly), len(offers)) == (11, 10, 21)
    assert {o["vendor_data"]["table"] for o in hourly} == {"按量计费（元/小时）"}
    assert {o["vendor_data"]["table"] for o in monthly} == {"包月（元/月）"}


def test_first_offer_fields(offers):
    first = offers[0]
    assert first["sku"] == "ml.gni3cl.5xlarge"
    assert first["gpu_text"] == "NVIDIA A100 80GB"
    assert first["gpu_count"] == "1"
    assert first["region_text"] == "华北2（北京）"
    assert first["offer_kind"] == "on_demand"
    assert first["billing_period"] == "hour"
    assert first["price_text"] == "27.50 元/小时"
    assert "price_amount" not in first and "currency" not in first  # the parser reads the text
    assert first["vendor"] == "火山引擎 Volcano Engine"
    assert first["vendor_kind"] == "hyperscaler"
    assert first["observed_at"] == "2026-11-30T09:00:00Z"


def test_header_unit_is_appended_to_the_cell(offers):
    row = by(offers, "ml.gni3cl.5xlarge", "华北2（北京）")
    assert {p: o["price_text"] for p, o in row.items()} == {"hour": "27.50 元/小时",
                                                            "month": "13,200.00 元/月"}
    assert row["month"]["vendor_data"]["row"]["包月（元/月）"] == "13,200.00"


def test_thousands_separator_and_unit_normalize(offers):
    monthly = normalize_offer(by(offers, "ml.gni3cl.45xlarge", "华东2（上海）")["month"])
    assert (monthly["price_amount"], monthly["currency"], monthly["billing_period"]) == (
        Decimal("105600.00"), "CNY", "month")
    assert monthly["price_per_gpu_hour_cny"] == Decimal("18.082192")  # 105,600 / 730 h / 8 cards


def test_contact_sales_cell_is_kept_and_quarantined(offers):
    cell = by(offers, "ml.hpcpni2.28xlarge", "华南1（广州）")["hour"]
    assert cell["price_text"] == "联系商务"
    with pytest.raises(Quarantined, match="not a price: 联系商务"):
        normalize_offer(cell)


def test_a800_rows_are_kept_as_an_8_card_server(offers):
    a800 = [o for o in offers if o["sku"] == "ml.pni2.28xlarge"]
    assert [o["gpu_text"] for o in a800] == ["NVIDIA A800 80GB"] * 2
    rows = [normalize_offer(offer) for offer in a800]
    assert {(r["gpu_model"], r["gpu_count"]) for r in rows} == {("A800-80GB", 8)}
    (hourly,) = [r for r in rows if r["billing_period"] == "hour"]
    assert hourly["price_per_gpu_hour_cny"] == Decimal("23.75")   # 190 CNY/h for 8 cards


def test_tracked_cards_and_regions_normalize(offers):
    rows = [normalize_offer(o) for o in offers
            if o["sku"] != "ml.pni2.28xlarge" and o["price_text"] != "联系商务"]
    assert len(rows) == 18
    assert {r["gpu_model"] for r in rows} == {"A100-80GB", "H800-80GB", "RTX4090-24GB"}
    assert {(r["region_code"], r["province_or_state"], r["is_tier1_city"]) for r in rows} == {
        ("cn-beijing", "Beijing", True), ("cn-shanghai", "Shanghai", True),
        ("cn-guangzhou", "Guangdong", True)}


def test_changed_price_header_fails_loudly(page):
    changed = page.replace(body=page.body.replace("包月（元/月）".encode(), "包月价格".encode()))
    with pytest.raises(ValueError,
                       match=r"volcengine_cn: table headers \['包月（元/月）'\] not found"):
        list(spider.parse(changed))


def test_price_table_without_region_column_fails_loudly(page):
    changed = page.replace(body=page.body.replace("<th>地域</th>".encode(),
                                                  "<th>可用区</th>".encode()))
    with pytest.raises(ValueError, match=r"volcengine_cn: table headers \['地域'\] not found"):
        list(spider.parse(changed))


def test_offer_invariants(offer):
    unit = {"hour": " 元/小时", "month": " 元/月"}[offer["billing_period"]]
    assert offer["price_text"].endswith(unit) or offer["price_text"] == "联系商务"
    assert offer["region_text"] in ("华北2（北京）", "华东2（上海）", "华南1（广州）")
    assert offer["gpu_count"] in ("1", "8")
    assert offer["url"] == "https://www.volcengine.com/docs/6459/72363"
    assert len(offer["raw_ref"]) == 64


def test_offers_are_unique(offers):
    keys = [(o["sku"], o["region_text"], o["billing_period"]) for o in offers]
    assert len(keys) == len(set(keys))
