"""Featurize: the 价格表 of its 计费 docs page (configured in idc_tables.toml), parsed from its
recorded page and normalized. Prices are docs/prices.md of louis-she/featurize-doc at ae41f19
(2021-06-15)."""

from decimal import Decimal

import pytest

from pipelines.normalize import normalize_offer
from spiders.registry import spider_class
from tests.helpers.responses import file_response, parsed_file, snapshot_entries

SOURCE = "featurize_cn"
PERIODS = {"每小时单价": "hour", "日租（1天）": "day", "周租（7天）": "week",
           "月租（30天）": "month"}


def _parse(response=None) -> list:
    return parsed_file(SOURCE, "prices.html", response)


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


# The 价格表 of docs/prices.md at louis-she/featurize-doc@ae41f19, as written (the vendor's own
# docs source: its readme and _config.yml name https://docs.featurize.cn).
MARKDOWN_TABLE = """\
|   实例配置        | 每小时单价          | 日租（1天） | 周租（7天） |  月租（30天） |
|:-------------:  |:------------------:|:------:|:------: |:------: |
|    P106 常规机型        |  0.7 元  |  9 元  | 48 元   | 180 元 |
|    1660 常规机型        |  0.9 元  |  12 元 | 60 元   | 225 元 |
|    1080 Ti 常规机型     |  1.2 元  |  23 元 | 140 元   | 520 元 |
|    2080 Ti 常规机型     |  2.0 元  |  38 元 | 230 元  | 860 元 |
|    3080 常规机型        |  2.4 元  |  46 元 | 280 元  | 1040 元 |
|    3090 常规机型        |  3.6 元  |  70 元 | 420 元  | 1500 元 |
|    V100 常规机型        |  4.5 元  |  90 元 | 550 元  | 2000 元 |
|    A6000 常规机型        |  8 元  |  150 元 | 950 元  | 3500 元 |"""


def test_the_recorded_table_is_the_markdown_table_as_kramdown_renders_it():
    """kramdown 2.3.0 (Jekyll 4.1.1's default converter, pinned by the docs' Gemfile.lock):
    the rows above the separator line become <thead><tr><th>, the rest <tbody><tr><td>, cell
    text stripped, a :-: column gives style="text-align: center" (its converter and the
    14_table/header fixture); just-the-docs 0.3.1's table_wrappers layout wraps the table in
    div.table-wrapper."""
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in MARKDOWN_TABLE.splitlines()]
    header, separator, body = rows[0], rows[1], rows[2:]
    assert all(s.startswith(":") and s.endswith(":") for s in separator)   # every column centred
    page = file_response(SOURCE, "prices.html")
    table = page.css("div.table-wrapper > table")
    assert len(page.css("table")) == len(table) == 1
    assert table.css("thead > tr > th::text").getall() == header
    assert [tr.css("td::text").getall() for tr in table.css("tbody > tr")] == body
    assert set(table.css("th::attr(style), td::attr(style)").getall()) == {"text-align: center"}
    assert len(table.css("th, td")) == 5 * 9
