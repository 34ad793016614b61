"""Configured IDC price tables: the spider built from idc_tables.toml parses its recorded page."""

import pytest

from spiders.base.html_table import availability
from spiders.registry import spider_class
from tests.helpers.responses import file_response

spider = spider_class("idc_sinnet_bj")(crawl_id="test")


@pytest.fixture(scope="module")
def offers() -> list[dict]:
    return list(spider.parse(file_response("idc_sinnet_bj", "gpu_price.html")))


def test_one_offer_per_row_and_billing_period(offers):
    # 10 rows x (hourly, monthly); the 面议 row still yields offers: normalization quarantines them.
    assert len(offers) == 20
    assert {o["billing_period"] for o in offers} == {"hour", "month"}


def test_whole_card_row(offers):
    a100 = [o for o in offers if o["gpu_text"] == "NVIDIA A100 80G SXM4 整卡"]
    assert [(o["billing_period"], o["price_text"]) for o in a100] == [
        ("hour", "¥62.00/时"), ("month", "¥11,800/月")]
    assert all(o["region_text"] == "北京" and o["gpu_count"] == "1" for o in a100)


def test_mig_slice_rows_keep_the_profile_in_the_card_text(offers):
    slices = {o["gpu_text"] for o in offers if "MIG" in o["gpu_text"]}
    assert slices == {"NVIDIA A100 80G SXM4 MIG 3g.40gb", "NVIDIA A100 80G SXM4 MIG 2g.20gb"}


def test_eight_gpu_server_row(offers):
    server = [o for o in offers if o["gpu_text"] == "NVIDIA A100 80G SXM4 整机"]
    assert {o["gpu_count"] for o in server} == {"8"}


def test_stock_column(offers):
    by_text = {o["gpu_text"]: o["available"] for o in offers}
    assert by_text["NVIDIA H100 80G SXM5 整卡"] is False      # 售罄
    assert by_text["NVIDIA A100 80G SXM4 MIG 2g.20gb"] is True  # 紧张 = scarce, still available


def test_changed_layout_fails_loudly():
    response = file_response("idc_sinnet_bj", "gpu_price.html")
    changed = response.replace(body=response.body.replace("按小时".encode(), "小时价".encode()))
    with pytest.raises(ValueError, match=r"idc_sinnet_bj: table headers \['按小时'\] not found"):
        list(spider.parse(changed))


@pytest.mark.parametrize("text, expected", [
    ("有货", True), ("紧张", True), ("售罄", False), ("无货", False), ("12/400", True),
    ("0/180", False), ("", None), ("咨询", None),
])
def test_availability(text, expected):
    assert availability(text) is expected
