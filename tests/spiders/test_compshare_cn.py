"""优云智算 Compshare: the 计费概览 price table of its docs (configured in idc_tables.toml), parsed
from its recorded page and normalized. Every price is the docs' own (bill.md at
BennielAllan/compshare-docs@ad2bf8f, cn-prices.csv rows for /docs/operation/charge/bill)."""

from decimal import Decimal

import pytest

from pipelines.normalize import Quarantined, normalize_offer
from spiders.base import HtmlTableSpider
from spiders.registry import spider_class
from tests.helpers.responses import file_response, snapshot_entries

SOURCE = "compshare_cn"
CARDS = ("4090-24G", "4090-48G", "5090", "3080ti", "3090", "2080ti", "2080", "A800", "A100",
         "H20", "P40", "v100s")
# cards the shared catalog does not know yet: quarantined, never guessed
NOT_IN_CATALOG = {"3080ti", "2080ti", "2080", "P40", "v100s"}


def _parse(response=None) -> list:
    spider = spider_class(SOURCE)(crawl_id="test")
    return list(spider.parse(response or file_response(SOURCE, "bill.html")))


@pytest.fixture(scope="module")
def offers() -> list:
    return _parse()


def _normalized(offers):
    ok, bad = [], []
    for offer in offers:
        try:
            ok.append(normalize_offer(dict(offer)))
        except Quarantined as exc:
            bad.append((offer, exc))
    return ok, bad


def test_is_configuration_only():
    cls = spider_class(SOURCE)
    assert cls.__module__ == "spiders.vendors.idc_tables" and cls.__bases__ == (HtmlTableSpider,)
    assert cls.vendor == "优云智算 Compshare (UCloud)" and cls.vendor_kind == "gpu_cloud"
    assert cls.is_template is False and cls.effective_at is None
    assert cls.start_urls == [e["url"] for e in snapshot_entries(SOURCE)] == [
        "https://www.compshare.cn/docs/operation/charge/bill"]


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
    ok, _ = _normalized(offers)
    assert {(r["region_code"], r["province_or_state"], r["city"], r["is_tier1_city"])
            for r in ok} == {("cn-wlcb", "Inner Mongolia", "Ulanqab", False)}
    assert {o["region_text"] for o in offers} == {"华北二"}


def test_cards_outside_the_catalog_are_quarantined_not_guessed(offers):
    ok, bad = _normalized(offers)
    assert {o["gpu_text"].split()[0] for o, _ in bad} == NOT_IN_CATALOG
    assert {exc.stage for _, exc in bad} == {"card"}
    assert {r["gpu_model"] for r in ok} == {"RTX4090-24GB", "RTX4090-48GB", "RTX5090-32GB",
                                            "RTX3090-24GB", "A800-80GB", "A100-80GB",
                                            "H20-96GB"}
    assert len(ok) == 21


def test_observed_at_is_the_snapshot_time_the_table_states_no_effective_date(offers):
    assert {o["observed_at"] for o in offers} == {"2026-11-30T09:00:00Z"}
    assert not any(o.get("effective_at") for o in offers)


def test_skus_are_unique_per_term(offers):
    keys = [(o["sku"], o["billing_period"]) for o in offers]
    assert len(keys) == len(set(keys))


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
