"""优云智算 Compshare: the 计费概览 price table of its docs and its dated price announcements
(spiders/vendors/compshare_cn.py), parsed from the recorded pages and normalized. Every price is
the docs' own (bill.md and specialevent/event0, 1, 3 at BennielAllan/compshare-docs@ad2bf8f)."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from pipelines.normalize import Quarantined, normalize_offer
from spiders.base import HtmlTableSpider
from spiders.registry import spider_class
from spiders.vendors.compshare_cn import TABLE_CARD, announced_date
from tests.helpers.normalized import normalized
from tests.helpers.responses import file_response, parsed_file, snapshot_entries

SOURCE = "compshare_cn"
CARDS = ("4090-24G", "4090-48G", "5090", "3080ti", "3090", "2080ti", "2080", "A800", "A100",
         "H20", "P40", "v100s")
# the table's 型号 + 显存 -> the catalog model (card_catalog.csv rows cite these prices)
MODELS = {"4090-24G": "RTX4090-24GB", "4090-48G": "RTX4090-48GB", "5090": "RTX5090-32GB",
          "3080ti": "RTX3080TI-12GB", "3090": "RTX3090-24GB", "2080ti": "RTX2080TI-11GB",
          "2080": "RTX2080-8GB", "A800": "A800-80GB", "A100": "A100-80GB", "H20": "H20-96GB",
          "v100s": "V100S-32GB", "P40": "P40-24GB"}   # every card of the table is catalogued


def _parse(response=None) -> list:
    return parsed_file(SOURCE, "bill.html", response)


@pytest.fixture(scope="module")
def offers() -> list:
    return _parse()


def test_the_table_is_read_as_a_configured_table_would_be():
    cls = spider_class(SOURCE)
    assert cls.__module__ == "spiders.vendors.compshare_cn" and cls.__bases__ == (HtmlTableSpider,)
    assert cls.vendor == "优云智算 Compshare (UCloud)" and cls.vendor_kind == "gpu_cloud"
    assert cls.is_template is False and cls.effective_at is None
    assert cls.start_urls == [e["url"] for e in snapshot_entries(SOURCE)] == [
        "https://www.compshare.cn/docs/operation/charge/bill",
        *(f"https://www.compshare.cn/docs/overview/specialevent/event{n}" for n in (0, 1, 3))]


def test_one_offer_per_card_and_term_and_the_disk_table_is_skipped(offers):
    assert len(offers) == 36 == len(CARDS) * 3
    assert [o["gpu_text"].split()[0] for o in offers[::3]] == list(CARDS)
    assert {o["billing_period"] for o in offers} == {"hour", "day", "month"}
    assert not [o for o in offers if "GB" in o["price_text"]]   # 0.0005元/GB/小时 is a disk price


@pytest.mark.parametrize("card, period, price_text, per_gpu_hour_cny", [
    # bill.md, one card, list price in 元: 按量 / 包日 (÷24) / 包月 (÷730)
    ("4090-24G", "hour", "1.66 元", Decimal("1.66")),
    ("4090-24G", "day", "36.73 元", Decimal("36.73") / 24),
    ("4090-24G", "month", "1001.95 元", Decimal("1001.95") / 730),
    ("A100", "hour", "10.75 元", Decimal("10.75")),
    ("A800", "month", "3742.32 元", Decimal("3742.32") / 730),
    ("H20", "day", "165 元", Decimal("165") / 24),
    ("5090", "hour", "3.16 元", Decimal("3.16")),
])
def test_bare_number_cells_read_with_the_page_unit(card, period, price_text, per_gpu_hour_cny,
                                                   offers):
    [offer] = [o for o in offers
               if o["gpu_text"].split()[0] == card and o["billing_period"] == period]
    assert offer["price_text"] == price_text and offer["price_per_card"] is True
    row = normalize_offer(dict(offer))
    assert row["currency"] == "CNY" and row["offer_kind"] == "on_demand"
    assert row["price_per_gpu_hour_cny"] == per_gpu_hour_cny.quantize(Decimal("0.000001"))


def test_placed_in_huabei2_ulanqab_inner_mongolia(offers):
    ok, _ = normalized(offers)
    assert {(r["region_code"], r["province_or_state"], r["city"], r["is_tier1_city"])
            for r in ok} == {("cn-wlcb", "Inner Mongolia", "Ulanqab", False)}
    assert {o["region_text"] for o in offers} == {"华北二"}


def test_every_card_normalizes_to_its_own_model(offers):
    ok, bad = normalized(offers)
    assert bad == []
    assert {o["gpu_text"].split()[0]: r["gpu_model"] for o, r in zip(offers, ok, strict=True)} \
        == MODELS
    # v100s is its own card, not a V100; 2080 is not the 2080ti; 3080ti not a 3080
    assert len(set(MODELS.values())) == len(MODELS)


def test_observed_at_is_the_snapshot_time_the_table_states_no_effective_date(offers):
    assert {o["observed_at"] for o in offers} == {"2026-11-30T09:00:00Z"}
    assert not any(o.get("effective_at") for o in offers)


def test_changed_layout_fails_loudly():
    response = file_response(SOURCE, "bill.html")
    changed = response.replace(body=response.body.replace("包日".encode(), "按日".encode()))
    with pytest.raises(ValueError, match=r"compshare_cn: table headers \['包日'\] not found"):
        _parse(changed)


def test_a_page_without_tables_fails_loudly():
    response = file_response(SOURCE, "bill.html")
    with pytest.raises(ValueError, match="no GPU price tables"):
        _parse(response.replace(body=b"<html><body><p>loading</p></body></html>"))


def test_an_empty_cell_is_no_offer():
    response = file_response(SOURCE, "bill.html")
    emptied = response.replace(body=response.body.replace(b"<td>1001.95</td>", b"<td></td>"))
    offers = _parse(emptied)
    assert len(offers) == 35
    assert not [o for o in offers if o["gpu_text"].startswith("4090-24G")
                and o["billing_period"] == "month"]


# ---- dated announcements: list prices that land on the page's date ------------------------

def _announced(n: int, response=None) -> list:
    spider = spider_class(SOURCE)(crawl_id="test")
    return list(spider.parse(response or file_response(SOURCE, f"event{n}.html")))


@pytest.mark.parametrize("text, date", [
    ("### 活动时间：2025年11月11日开始", "2025-11-11"),
    ("活动时间：2025年10月1日00:00-2025年10月8日24:00", "2025-10-01"),
    ("活动时间: 2025 年 12 月 31 日开始", "2025-12-31"),
    ("订单范围：2025年10月1日09:30:00", None),   # a date, but not the announcement's
    ("长期有效", None),
])
def test_announced_date(text, date):
    assert announced_date(text) == date


@pytest.mark.parametrize("n, effective, prices", [
    (0, "2025-10-01", {"4090-24G 24G": "2.08元/时", "3090 24G": "1.5元/时",
                       "A800 80G": "8.11元/时", "A100 80G": "10.75元/时"}),
    (1, "2025-11-11", {"3090 24G": "1.19元/时", "3080ti 12G": "0.74元/时", "P40 24G": "0.67元/时",
                       "A800 80G": "6.23元/时"}),
    (3, "2025-12-31", {"4090-24G 24G": "1.67元/时", "P40 24G": "0.4元/时"}),
])
def test_announcements_list_prices_with_the_pages_date(n, effective, prices):
    offers = _announced(n)
    assert prices.items() <= {o["gpu_text"]: o["price_text"] for o in offers}.items()
    assert {o["effective_at"] for o in offers} == {effective}
    assert {(o["billing_period"], o["offer_kind"], o["region_text"]) for o in offers} == {
        ("hour", "on_demand", "华北二")}


@pytest.mark.parametrize("n, card, observed, per_gpu_hour", [
    (0, "4090-24G 24G", datetime(2025, 10, 1, tzinfo=UTC), "2.080000"),
    (1, "A800 80G", datetime(2025, 11, 11, tzinfo=UTC), "6.230000"),
    (3, "4090-24G 24G", datetime(2025, 12, 31, tzinfo=UTC), "1.670000"),
])
def test_an_announced_price_is_observed_on_its_date(n, card, observed, per_gpu_hour):
    [offer] = [o for o in _announced(n) if o["gpu_text"] == card]
    row = normalize_offer(dict(offer))
    assert row["observed_at"] == observed and str(row["price_per_gpu_hour_cny"]) == per_gpu_hour


def test_one_card_is_one_offer_across_the_table_and_the_announcements(offers):
    hourly = {o["gpu_text"]: o for o in offers if o["billing_period"] == "hour"}
    ids = {}
    for n in (0, 1, 3):
        for offer in _announced(n):
            try:
                row = normalize_offer(dict(offer))
            except Quarantined:
                continue
            ids.setdefault(offer["gpu_text"], set()).add(row["offer_id"])
            ids[offer["gpu_text"]].add(normalize_offer(dict(hourly[offer["gpu_text"]]))["offer_id"])
    # 4090 24 GB: 2.08 (2025-10-01) -> 1.67 (2025-12-31) -> the table's 1.66, one offer_id
    assert ids["4090-24G 24G"] and all(len(v) == 1 for v in ids.values())


def test_member_prices_and_the_previous_list_price_are_kept_not_offered():
    [offer] = [o for o in _announced(1) if o["gpu_text"] == "3090 24G"]
    data = offer["vendor_data"]
    assert data["member_prices"] == {"白银会员": "1.13元/时", "黄金会员": "1.1元",
                                     "钻石会员": "1.07元/时"}
    assert data["previous_list_price"] == "1.5元/时" and data["list_price_column"] == "现价"
    assert data["announced_card"] == "3090"
    assert len(_announced(1)) == 4   # one offer per card, not one per tier
    event0 = _announced(0)
    assert {o["vendor_data"]["list_price_column"] for o in event0} == {"日常单价"}
    assert "青铜会员" in event0[0]["vendor_data"]["member_prices"]


@pytest.mark.parametrize("card, table_card", [
    ("4090", "4090-24G 24G"), ("4090-48G", "4090-48G 48G"), ("3080Ti", "3080ti 12G"),
    ("A100", "A100 80G"), ("H20", "H20 96G"),
])
def test_announced_cards_take_the_tables_spelling(card, table_card):
    assert TABLE_CARD[card] == table_card
    assert table_card.split()[0] in CARDS


def test_an_undated_announcement_fails_loudly():
    response = file_response(SOURCE, "event1.html")
    undated = response.replace(body=response.body.replace("活动时间".encode(), "时间".encode()))
    with pytest.raises(ValueError, match="no 活动时间 date"):
        _announced(1, undated)


def test_an_announcement_without_its_price_table_fails_loudly():
    response = file_response(SOURCE, "event3.html")
    changed = response.replace(body=response.body.replace("现价".encode(), "价格".encode()))
    with pytest.raises(ValueError, match="no GPU型号 / 现价 table"):
        _announced(3, changed)


def test_an_empty_price_cell_is_no_offer():
    response = file_response(SOURCE, "event3.html")
    emptied = response.replace(body=response.body.replace("<td>0.4元/时</td>".encode(),
                                                          b"<td></td>"))
    assert [o["gpu_text"] for o in _announced(3, emptied)] == ["4090-24G 24G"]
