"""tencent_cn_list: the 标准刊例价 tables of Tencent's GPU 价格总览 document (version 8ec0729's
30 rows, real list prices), read as a second path to tencent_cn's offers. Ranges ("4671 - 5190":
a price per zone) are kept whole and quarantined with their reason, never one end."""

from __future__ import annotations

import functools
from decimal import Decimal

import pytest

from pipelines.normalize import Quarantined, normalize_offer
from spiders.parsing.machine import machine_specs
from spiders.vendors.tencent_cn_list import DOC_URL, TencentCNListSpider
from tests.helpers.responses import file_response, snapshot_entries

spider = TencentCNListSpider(crawl_id="test")
FILE = "jiage_zonglan.md"


@functools.cache
def parsed() -> list[dict]:
    return list(spider.parse(file_response("tencent_cn_list", FILE)))


@pytest.fixture(scope="module")
def offers() -> list[dict]:
    return parsed()


def by(offers, sku) -> dict[str, dict]:
    return {o["billing_period"]: o for o in offers if o["sku"] == sku}


def normalized_or_why(offer) -> dict | str:
    try:
        return normalize_offer(offer)
    except Quarantined as why:
        return str(why)


def test_one_request_the_documents_file_recorded():
    assert spider.start_urls == [DOC_URL]
    assert [e["url"] for e in snapshot_entries("tencent_cn_list")] == [DOC_URL]
    assert "qcloud-documents/master/" in DOC_URL


def test_it_is_a_second_path_of_tencent_cn():
    assert TencentCNListSpider.second_path_of == "tencent_cn"
    assert TencentCNListSpider.vendor == "腾讯云 Tencent Cloud"


def test_every_row_of_every_family_gives_a_month_and_an_hour(offers):
    assert len(offers) == 60
    assert {o["sku"].split(".")[0] for o in offers} == {
        "GT4", "GN10X", "GN10Xp", "GN8", "GI3X", "GN7", "GN6", "GN6S"}
    assert all({o["billing_period"] for o in offers if o["sku"] == s} == {"hour", "month"}
               for s in {o["sku"] for o in offers})


def test_first_offer_fields(offers):
    first = offers[0]
    assert {k: first[k] for k in ("sku", "gpu_text", "gpu_count_text", "region_text",
                                  "offer_kind", "billing_period", "price_text", "currency",
                                  "available")} == {
        "sku": "GT4.4XLARGE96", "gpu_text": "NVIDIA A100-NVLINK-40G", "gpu_count_text": "1颗",
        "region_text": "中国大陆", "offer_kind": "on_demand", "billing_period": "month",
        "price_text": "13748 元/月", "currency": "CNY", "available": None}
    assert machine_specs(first) == {"vcpus": 16, "memory_gib": 96, "disk_gb": None}


@pytest.mark.parametrize("sku, period, model, count, per_gpu_hour", [
    ("GT4.4XLARGE96", "hour", "A100-40GB", 1, Decimal("28.640000")),
    ("GT4.41XLARGE948", "hour", "A100-40GB", 8, Decimal("29.688750")),
    ("GT4.41XLARGE948", "month", "A100-40GB", 8, Decimal("19.523288")),   # 114016 / 730 / 8
    ("GN10Xp.20XLARGE320", "hour", "V100-32GB", 8, Decimal("11.980000")),
    ("GI3X.8XLARGE64", "hour", "T4-16GB", 1, Decimal("9.580000")),
])
def test_single_prices_land_on_their_cards_in_china_mainland(offers, sku, period, model, count,
                                                             per_gpu_hour):
    row = normalize_offer(by(offers, sku)[period])
    assert (row["gpu_model"], row["gpu_count"], row["price_per_gpu_hour_cny"]) == (
        model, count, per_gpu_hour)
    assert (row["country"], row["province_or_state"]) == ("CN", None)


@pytest.mark.parametrize("sku, period, text", [
    ("GN10X.2XLARGE40", "month", "4671 - 5190 元/月"),
    ("GN10X.2XLARGE40", "hour", "16.21 - 18.04 元/小时"),
    ("GN7.LARGE20", "hour", "3.05 - 3.39 元/小时"),
    ("GN7.8XLARGE128", "hour", "17.18 - 19.1 元/小时"),
])
def test_a_range_is_kept_whole_and_quarantined_with_its_reason(offers, sku, period, text):
    offer = by(offers, sku)[period]
    assert offer["price_text"] == text and offer.get("price_amount") is None
    low, high = text.split(" 元")[0].split(" - ")
    assert offer.get("price_low") is None   # the range is read by normalization, not the spider
    why = normalized_or_why(offer)
    assert why.startswith("range: price range") and low in why and high in why


def test_how_many_land_and_why_the_rest_do_not(offers):
    reasons = [normalized_or_why(o) for o in offers]
    landed = [r for r in reasons if isinstance(r, dict)]
    why = sorted({r.split(":")[0] for r in reasons if isinstance(r, str)})
    # GT4 4x2, GN10Xp 4x2, GI3X 3x2, GN6 (P4) 2x2, GN6S (P4) 2x2: the single prices
    assert len(landed) == 30
    assert why == ["range"]   # GN7 (T4) and GN8 (P40) are written as ranges
    assert {o["sku"] for o, r in zip(offers, reasons, strict=True) if isinstance(r, dict)
            and r["gpu_model"] == "P4-8GB"} == {
        "GN6.7XLARGE48", "GN6.14XLARGE96", "GN6S.LARGE20", "GN6S.2XLARGE40"}


def test_vgpu_shares_are_fractions_of_a_t4(offers):
    """The GPU cell goes as written; normalization reads the share (tests/parsing/
    test_count_cells.py has the cells). Their prices are ranges: an end is declared here."""
    quarter, half = by(offers, "GN7.LARGE20")["month"], by(offers, "GN7.2XLARGE40")["month"]
    assert [(o["gpu_text"], o["gpu_count_text"]) for o in (quarter, half)] == [
        ("Tesla T4", "1/4颗"), ("Tesla T4", "1/2颗")]
    assert [(r["gpu_model"], r["gpu_count"], r["gpu_fraction"])
            for r in (normalize_offer({**o, "range_end": "low"}) for o in (quarter, half))] == [
        ("T4-16GB", 1, Decimal("0.25")), ("T4-16GB", 1, Decimal("0.5"))]


def test_the_docs_stray_row_is_skipped_not_an_offer(offers):
    assert len([o for o in offers if o["sku"].startswith("GI3X")]) == 6


def test_a_table_without_a_gpu_column_fails_loudly():
    response = file_response("tencent_cn_list", FILE)
    broken = response.replace(body=response.body.replace("GPU（".encode(), "显卡（".encode(), 1))
    with pytest.raises(ValueError, match=r"a price table without a GPU（card） column"):
        list(spider.parse(broken))


def test_a_page_without_tables_fails_loudly():
    """The published page today (计费说明, no tables) must not pass as 0 offers."""
    response = file_response("tencent_cn_list", FILE)
    with pytest.raises(ValueError, match=r"no GPU price tables"):
        list(spider.parse(response.replace(body="## 计费说明\n\n请使用价格计算器。".encode())))


def test_a_renamed_price_header_fails_loudly():
    response = file_response("tencent_cn_list", FILE)
    broken = response.replace(body=response.body.replace("按量计费".encode(), "按需计费".encode()))
    with pytest.raises(ValueError, match=r"table headers .* not found"):
        list(spider.parse(broken))
