"""Featurize: the 价格表 of its 计费 docs page (configured in idc_tables.toml), parsed from its
recorded page and normalized. Prices are docs/prices.md of louis-she/featurize-doc at ae41f19
(2021-06-15)."""

from decimal import Decimal

import pytest

from pipelines.normalize import normalize_offer
from spiders.registry import spider_class
from tests.helpers.responses import file_response, snapshot_entries

SOURCE = "featurize_cn"
PERIODS = {"每小时单价": "hour", "日租（1天）": "day", "周租（7天）": "week",
           "月租（30天）": "month"}


def _parse(response=None) -> list:
    spider = spider_class(SOURCE)(crawl_id="test")
    return list(spider.parse(response or file_response(SOURCE, "prices.html")))


@pytest.fixture(scope="module")
def offers() -> list:
    return _parse()


def test_configuration():
    cls = spider_class(SOURCE)
    assert cls.vendor == "Featurize" and cls.vendor_kind == "gpu_cloud" and not cls.is_template
    assert cls.start_urls == [e["url"] for e in snapshot_entries(SOURCE)] == [
        "https://docs.featurize.cn/%E8%AE%A1%E8%B4%B9"]   # site url + permalink /计费


def test_eight_instance_types_times_four_terms(offers):
    assert len(offers) == 32
    assert [o["billing_period"] for o in offers[:4]] == list(PERIODS.values())
    assert all(o["price_text"].endswith(" 元") for o in offers)


@pytest.mark.parametrize("card, period, amount, hours", [
    ("3090 常规机型", "hour", "3.6", 1), ("3090 常规机型", "day", "70", 24),
    ("3090 常规机型", "week", "420", 168), ("3090 常规机型", "month", "1500", 730),
    ("V100 常规机型", "week", "550", 168), ("A6000 常规机型", "day", "150", 24),
    ("A6000 常规机型", "month", "3500", 730),
])
def test_day_week_month_terms_turn_hourly(card, period, amount, hours, offers):
    [offer] = [o for o in offers if o["gpu_text"] == card and o["billing_period"] == period]
    assert offer["price_text"] == f"{amount} 元"
    row = normalize_offer(dict(offer))
    assert row["billing_period"] == period and row["price_amount"] == Decimal(amount)
    assert row["price_per_gpu_hour_cny"] == (Decimal(amount) / hours).quantize(Decimal("0.000001"))


def test_zones_name_no_province_so_country_level(offers):
    rows = [normalize_offer(dict(o)) for o in offers if o["gpu_text"].startswith(("3090", "V100"))]
    assert {(r["country"], r["province_or_state"], r["city"]) for r in rows} == {("CN", None, None)}


@pytest.mark.parametrize("card, model", [
    ("P106 常规机型", "P106-6GB"), ("1660 常规机型", "GTX1660-6GB"),
    ("1080 Ti 常规机型", "GTX1080TI-11GB"), ("2080 Ti 常规机型", "RTX2080TI-11GB"),
    ("3080 常规机型", "RTX3080-10GB"), ("3090 常规机型", "RTX3090-24GB"),
    ("V100 常规机型", "V100-16GB"), ("A6000 常规机型", "RTXA6000-48GB"),
])
def test_every_instance_type_normalizes_to_its_card(card, model, offers):
    rows = [normalize_offer(dict(o)) for o in offers if o["gpu_text"] == card]
    assert len(rows) == 4 and {r["gpu_model"] for r in rows} == {model}


def test_a_renamed_term_column_fails_loudly():
    response = file_response(SOURCE, "prices.html")
    changed = response.replace(body=response.body.replace("周租（7天）".encode(), "周租".encode()))
    with pytest.raises(ValueError,
                       match=r"featurize_cn: table headers \['周租（7天）'\] not found"):
        _parse(changed)
