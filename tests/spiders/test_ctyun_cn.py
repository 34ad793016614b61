"""天翼云 China Telecom: the GPU 云主机 价格总览 docs page (configured in idc_tables.toml), parsed
from its recorded page and normalized. Values are the page's as public clients of it carry them
(manifest: code-search index file 67232863195, seagawhy/ctyunprice @ 76d3e66), dated 2026-06-05."""

from decimal import Decimal

import pytest

from pipelines.normalize import normalize_offer
from spiders.registry import spider_class
from tests.helpers.responses import file_response, parsed_file, snapshot_entries
from tests.helpers.spider_contract import check_contract

SOURCE = "ctyun_cn"


def _parse(response=None) -> list:
    return parsed_file(SOURCE, "prices.html", response)


@pytest.fixture(scope="module")
def offers() -> list:
    return _parse()


def test_configuration():
    cls = spider_class(SOURCE)
    assert cls.vendor == "天翼云 China Telecom" and cls.vendor_kind == "gpu_cloud"
    assert not cls.is_template
    assert cls.start_urls == [e["url"] for e in snapshot_entries(SOURCE)] == [
        "https://www.ctyun.cn/document/10029787/10047957"]


def test_twelve_types_times_hourly_and_monthly(offers):
    assert len(offers) == 24
    assert {o["billing_period"] for o in offers} == {"hour", "month"}
    check_contract(SOURCE, offers)


@pytest.mark.parametrize("sku, period, amount, count, model, per_gpu_hour", [
    ("p8a.6xlarge.4", "hour", "21.31", 1, "A100-40GB", "21.310000"),
    ("p8a.12xlarge.4", "hour", "42.62", 2, "A100-40GB", "21.310000"),
    ("p8av.27xlarge.8", "hour", "250.13", 8, "A100-40GB", "31.266250"),
    ("pn8s.44xlarge.4", "hour", "250.20", 8, "L40S-48GB", "31.275000"),
    ("pn8i.4xlarge.8", "month", "7545", 1, "L20-48GB", None),
    ("pi2.8xlarge.4", "hour", "29.30", 4, "T4-16GB", "7.325000"),
])
def test_instance_price_over_its_cards(sku, period, amount, count, model, per_gpu_hour, offers):
    [offer] = [o for o in offers if sku in o["sku"] and o["billing_period"] == period]
    row = normalize_offer(dict(offer))
    assert row["price_amount"] == Decimal(amount) and row["gpu_count"] == count
    assert row["gpu_model"] == model
    if per_gpu_hour:
        assert row["price_per_gpu_hour_cny"] == Decimal(per_gpu_hour)


def test_two_families_of_one_card_and_count_stay_apart(offers):
    one_a100 = {o["sku"] for o in offers if o["gpu_text"] == "A100" and o["gpu_count"] == "1"}
    assert len(one_a100) == 2   # P8A and P8AV, told apart by 规格名称


def test_the_page_names_no_pool_so_country_level(offers):
    rows = [normalize_offer(dict(o)) for o in offers if o["gpu_text"] != "Ascend 910B"]
    assert {(r["country"], r["province_or_state"]) for r in rows} == {("CN", None)}


def test_a_renamed_price_column_fails_loudly():
    response = file_response(SOURCE, "prices.html")
    changed = response.replace(body=response.body.replace(
        "按需价格（元/小时）".encode(), "按需价格".encode()))
    with pytest.raises(ValueError, match=r"ctyun_cn: table headers .*按需价格（元/小时）"):
        _parse(changed)
