"""UCloud UHost: the GPU sentences of the UHost price document
(spiders/vendors/ucloud_uhost_cn.py), parsed from the recorded page and normalized. Every price is
the document's own (UCloudDoc-Team/uhost price.md @ 3eaf81d, 2025-12-30)."""

from decimal import Decimal

import pytest

from pipelines.normalize import normalize_offer
from spiders.registry import spider_class
from tests.helpers.normalized import normalized
from tests.helpers.responses import file_response, parsed_file, snapshot_entries

SOURCE = "ucloud_uhost_cn"


def _parse(response=None) -> list:
    return parsed_file(SOURCE, "price.html", response)


@pytest.fixture(scope="module")
def offers() -> list:
    return _parse()


def test_one_offer_per_gpu_type_of_the_document(offers):
    assert spider_class(SOURCE).start_urls == [e["url"] for e in snapshot_entries(SOURCE)] == [
        "https://docs.ucloud.cn/uhost/price"]
    assert [(o["sku"], o["gpu_text"], o["price_text"]) for o in offers] == [
        ("GPU-K80 | 1", "Tesla K80", "1700元/月"),
        ("GPU-P40 | 1", "Tesla P40", "2500元/月"),
        ("GPU-V100 | 1", "Tesla V100", "5000元/月")]
    assert {(o["offer_kind"], o["billing_period"], o["gpu_count"], o["price_per_card"])
            for o in offers} == {("on_demand", "month", 1, True)}
    assert {o["vendor_data"]["cards_per_host"] for o in offers} == {"1-2", "1-4"}


@pytest.mark.parametrize("card, model, monthly", [
    ("Tesla K80", "K80-12GB", Decimal("1700")),
    ("Tesla P40", "P40-24GB", Decimal("2500")),
    ("Tesla V100", "V100-16GB", Decimal("5000")),
])
def test_a_cards_monthly_price_per_gpu_hour(card, model, monthly, offers):
    [offer] = [o for o in offers if o["gpu_text"] == card]
    row = normalize_offer(dict(offer))
    assert row["gpu_model"] == model and row["currency"] == "CNY"
    assert row["price_per_gpu_hour_cny"] == (monthly / 730).quantize(Decimal("0.000001"))


def test_placed_in_beijing_2_zone_e(offers):
    ok, bad = normalized(offers)
    assert bad == []
    assert {(r["region_code"], r["province_or_state"], r["city"]) for r in ok} == {
        ("cn-bj2", "Beijing", "Beijing")}
    assert {o["region_text"] for o in offers} == {"华北（北京2）"}
    assert {o["vendor_data"]["zone"] for o in offers} == {"可用区E"}


def test_observed_when_the_document_version_was_published(offers):
    assert {(o["observed_at"], o["price_basis"], o["prices_as_of"]) for o in offers} == {
        ("2025-12-30T13:03:02Z", "published", "2025-12-30")}


def test_todays_page_without_prices_fails_loudly():
    # price.md since 2026-01-29: "GPU对应价格请参考GPU文档或参考控制台。"
    response = file_response(SOURCE, "price.html")
    body = response.text
    start, end = body.index("<p>GPU-K80"), body.index("<h2>6.")
    changed = response.replace(body=(body[:start] + "<p>GPU对应价格请参考GPU文档或参考控制台。</p>"
                                     + body[end:]).encode())
    with pytest.raises(ValueError, match="no 每颗GPU售价 sentence"):
        _parse(changed)


def test_a_page_without_its_example_zone_fails_loudly():
    response = file_response(SOURCE, "price.html")
    changed = response.replace(body=response.body.replace("为例".encode(), b""))
    with pytest.raises(ValueError, match="no 文档中的价格以…为例 region"):
        _parse(changed)
