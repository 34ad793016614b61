"""江苏电信 天翼云省分 (智枢平台): the 智算服务 rental tables of its 智算市场动态 page
(configured in idc_tables.toml), parsed from the recorded page and normalized. Values are the
page's markdown at Hppppppf/jsctyun_gpu @ 2632fbf (2025-04-01)."""

from decimal import Decimal

import pytest

from pipelines.normalize import normalize_offer
from spiders.registry import spider_class
from tests.helpers.responses import file_response, parsed_file, snapshot_entries
from tests.helpers.spider_contract import check_contract

SOURCE = "ctyun_js"


def _parse(response=None) -> list:
    return parsed_file(SOURCE, "market.html", response)


@pytest.fixture(scope="module")
def offers() -> list:
    return _parse()


def test_configuration():
    cls = spider_class(SOURCE)
    assert cls.vendor_kind == "idc" and not cls.is_template
    assert cls.start_urls == [e["url"] for e in snapshot_entries(SOURCE)] == [
        "https://hppppppf.github.io/jsctyun_gpu/market/"]


def test_only_the_rental_tables_are_read(offers):
    # the 设备采购 tables give purchase prices (服务器价格): not a rental, no offer
    assert len(offers) == 9
    assert {o["billing_period"] for o in offers} == {"month"}
    assert not any("万" in o["price_text"] and float(o["price_text"][:-1]) > 10 for o in offers)
    check_contract(SOURCE, offers)


@pytest.mark.parametrize("card, amount, model, per_gpu_hour", [
    ("H20 141G", "35000", "H20-141GB", "5.993151"),
    ("H200", "80000", "H200-141GB", "13.698630"),
    ("A800", "35000", "A800-80GB", "5.993151"),
    ("RTX 4090", "8000", "RTX4090-24GB", "1.369863"),   # "4090" mapped with its 8 cards
])
def test_a_servers_month_over_its_eight_cards(card, amount, model, per_gpu_hour, offers):
    [offer] = [o for o in offers if o["gpu_text"] == card]
    row = normalize_offer(dict(offer))
    assert row["price_amount"] == Decimal(amount) and row["gpu_count"] == 8
    assert row["gpu_model"] == model
    assert row["price_per_gpu_hour_cny"] == Decimal(per_gpu_hour)
    assert (row["country"], row["province_or_state"], row["city"]) == ("CN", "Jiangsu", None)


def test_the_4090_rows_count_comes_from_its_mapping(offers):
    [offer] = [o for o in offers if "8*4090" in o["config_text"]]
    assert (offer["gpu_text"], offer["gpu_count"]) == ("RTX 4090", 8)
    assert offer["vendor_data"]["partition"] == "4090"


def test_a_renamed_rent_column_fails_loudly():
    response = file_response(SOURCE, "market.html")
    changed = response.replace(body=response.body.replace(
        "租赁价格（元/月/台）".encode(), "租赁价格".encode()))
    with pytest.raises(ValueError, match=r"ctyun_js"):
        _parse(changed)
