"""The price grammar class by class (issue 12): ranges, per-card markers, units, tax markers,
original/current pairs, minimum terms and periods. Each class has its table of happy and unhappy
cases and a property; test_prices.py holds the general spellings, test_price_sub_units.py the units
inside amounts (cents, 分, 厘...) and test_price_markup.py prices inside markup."""

from __future__ import annotations

from decimal import Decimal as D

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spiders.parsing.prices import (
    PriceParseError,
    is_per_card,
    parse_period,
    parse_price,
    raw_price_fields,
)

# Amounts with 0-2 decimals in [0.01, 10^5), as vendors write them.
AMOUNTS = st.sampled_from([0, 1, 2]).flatmap(
    lambda places: st.integers(min_value=1, max_value=10 ** (5 + places) - 1).map(
        lambda n: D(n).scaleb(-places)))


def _fails(text: str, reason: str, **kwargs) -> None:
    with pytest.raises(PriceParseError) as err:
        parse_price(text, **kwargs)
    assert reason in str(err.value)


# ---- ranges: both ends kept; a price only when the source declares which end it lists ---------

# text, range_end -> (amount, low, high, currency, period)
RANGES = [
    ("20-30元/小时", None, (None, D(20), D(30), "CNY", "hour")),
    ("20-30元/小时", "low", (D(20), D(20), D(30), "CNY", "hour")),
    ("20~30元/时", "high", (D(30), D(20), D(30), "CNY", "hour")),
    ("20～30元/时", None, (None, D(20), D(30), "CNY", "hour")),
    ("20至30元/小时", "low", (D(20), D(20), D(30), "CNY", "hour")),
    ("¥20-¥30/时", None, (None, D(20), D(30), "CNY", "hour")),
    ("2-3万/月", "high", (D(30000), D(20000), D(30000), "CNY", "month")),
    ("5000-3万元/月", None, (None, D(5000), D(30000), "CNY", "month")),
    ("$2.00 - $3.50/hr", "high", (D("3.50"), D(2), D("3.50"), "USD", "hour")),
    ("300-500分/时", "low", (D(3), D(3), D(5), "CNY", "hour")),        # 分 written once
    ("6000-9000元/季度", None, (None, D(6000), D(9000), "CNY", "quarter")),
]


@pytest.mark.parametrize(("text", "range_end", "expected"), RANGES)
def test_range_keeps_both_ends(text, range_end, expected):
    got = parse_price(text, range_end=range_end)
    assert (got.amount, got.price_low, got.price_high, got.currency, got.period) == expected
    assert got.is_range


@pytest.mark.parametrize(("text", "kwargs", "reason"), [
    ("30-20元/时", {}, "upper end"),
    ("20-20元/时", {"range_end": "low"}, "upper end"),
    ("0-30元/时", {"range_end": "high"}, "zero amount"),
    ("20-30元/时", {"range_end": "middle"}, "unknown range end"),
])
def test_range_unhappy(text, kwargs, reason):
    _fails(text, reason, **kwargs)


def test_a_single_price_is_no_range_whatever_the_source_declares():
    got = parse_price("¥25/时", range_end="high")
    assert (got.amount, got.price_low, got.price_high, got.is_range) == (D(25), None, None, False)


@settings(max_examples=200, deadline=None)
@given(low=AMOUNTS, extra=AMOUNTS, sep=st.sampled_from(["-", "~", " - ", "至", " to "]),
       end=st.sampled_from([None, "low", "high"]))
def test_range_property_never_one_end_silently(low, extra, sep, end):
    high = low + extra
    got = parse_price(f"{low}{sep}{high}元/小时", range_end=end)
    assert (got.price_low, got.price_high, got.period) == (low, high, "hour")
    assert got.amount == {None: None, "low": low, "high": high}[end]


# ---- per-card markers, in any position -------------------------------------------------------

# text -> (amount, currency, period, per_card)
PER_CARD = [
    ("8000元/月/卡", (D(8000), "CNY", "month", True)),
    ("8000元/卡/月", (D(8000), "CNY", "month", True)),
    ("¥8000/月/卡", (D(8000), "CNY", "month", True)),
    ("每卡 ¥8000/月", (D(8000), "CNY", "month", True)),
    ("单卡 8000元/月", (D(8000), "CNY", "month", True)),
    ("单卡价格：¥62/时", (D(62), "CNY", "hour", True)),
    ("每张卡 ¥62/时", (D(62), "CNY", "hour", True)),
    ("¥2.1/卡·时", (D("2.1"), "CNY", "hour", True)),
    ("$2.49/hr per GPU", (D("2.49"), "USD", "hour", True)),
    ("$2.49 per GPU per hour", (D("2.49"), "USD", "hour", True)),
    ("$2.49/GPU-hr", (D("2.49"), "USD", "hour", True)),
    ("$2.49 per GPU-hour", (D("2.49"), "USD", "hour", True)),
    ("$2.49/hr/GPU", (D("2.49"), "USD", "hour", True)),
    ("$2.49/GPU", (D("2.49"), "USD", None, True)),
    ("¥500/台/月", (D(500), "CNY", "month", False)),        # per machine
    ("整机 ¥500/时", (D(500), "CNY", "hour", False)),
    ("¥64/时/台", (D(64), "CNY", "hour", False)),
    ("¥64/时", (D(64), "CNY", "hour", False)),
]


@pytest.mark.parametrize(("text", "expected"), PER_CARD)
def test_per_card_marker_anywhere(text, expected):
    got = parse_price(text)
    assert (got.amount, got.currency, got.period, got.per_card) == expected


def test_per_card_and_per_machine_in_one_price_is_refused():
    _fails("¥8/卡/时 (整机)", "both a per-card and a per-machine")


@pytest.mark.parametrize(("header", "expected"), [
    ("单卡价格(元/时)", True), ("元/卡/时", True), ("Price per GPU", True), ("每卡每月", True),
    ("$/GPU/hr", True), ("卡时价", True),
    ("按小时", False), ("月付价", False), ("整机价格", False), ("单卡/整机", False), ("", False),
    (None, False), ("Price per node", False),
])
def test_is_per_card_reads_headers_and_unit_cells(header, expected):
    assert is_per_card(header) is expected


PER_CARD_SPELLINGS = [
    ("¥{a}/卡/月", "CNY", "month"), ("¥{a}/月/卡", "CNY", "month"),
    ("{a}元/月/卡", "CNY", "month"), ("每卡 {a}元/小时", "CNY", "hour"),
    ("单卡 ¥{a}/天", "CNY", "day"), ("{a}元/卡/周", "CNY", "week"),
    ("${a}/GPU/hr", "USD", "hour"), ("${a}/hr/GPU", "USD", "hour"),
    ("${a} per GPU per hour", "USD", "hour"), ("US${a} per GPU-hour", "USD", "hour"),
    ("€{a}/GPU/h", "EUR", "hour"), ("¥{a}/卡季度", "CNY", "quarter"),
]


@settings(max_examples=300, deadline=None)
@given(amount=AMOUNTS, spelling=st.sampled_from(PER_CARD_SPELLINGS))
def test_per_card_property(amount, spelling):
    template, currency, period = spelling
    got = parse_price(template.format(a=amount))
    assert (got.amount, got.currency, got.period, got.per_card) == (amount, currency, period, True)


# ---- units: 元/角/分/厘 and 万/千/k (sub-units in every position: test_price_sub_units.py) ----

@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 10 ** 6), unit=st.sampled_from(
    [("元", 1), ("角", D("0.1")), ("分", D("0.01")), ("厘", D("0.001")), ("千", 1000),
     ("万", 10000)]))
def test_unit_property(n, unit):
    got = parse_price(f"{n}{unit[0]}/小时")
    assert (got.amount, got.currency) == (n * unit[1], "CNY")


# ---- tax markers, discounts and original/current pairs, minimum terms ----------------------------

# text -> (amount, period, tax_included, list_amount, min_term_hours)
TERMS = [
    ("¥62/时（含税）", (D(62), "hour", True, None, None)),
    ("含税价 ¥62/时", (D(62), "hour", True, None, None)),
    ("¥62/时 含6%增值税", (D(62), "hour", True, None, None)),    # 6% is no price
    ("¥62/时 不含税", (D(62), "hour", False, None, None)),
    ("¥62/时 税前", (D(62), "hour", False, None, None)),
    ("€1.10/h excl. VAT", (D("1.10"), "hour", False, None, None)),
    ("€1.10/h excl. 19% VAT", (D("1.10"), "hour", False, None, None)),
    ("$2.49/hr + tax", (D("2.49"), "hour", False, None, None)),
    ("$2.49/hr incl. VAT", (D("2.49"), "hour", True, None, None)),
    ("原价¥3/时 7折 ¥2.1/时", (D("2.1"), "hour", None, D(3), None)),
    ("折后 ¥2.1/时 原价 ¥3/时", (D("2.1"), "hour", None, D(3), None)),
    ("was $3.00, now $2.49/hr (-17%)", (D("2.49"), "hour", None, D(3), None)),
    ("限时8.5折 ¥2.1/时", (D("2.1"), "hour", None, None, None)),
    ("¥8000/月 3个月起", (D(8000), "month", None, None, 2190)),
    ("¥8000/月，1月起租", (D(8000), "month", None, None, 730)),
    ("起租期：7天 ¥45/天", (D(45), "day", None, None, 168)),
    ("最短租期 1 个月 ¥8000/月", (D(8000), "month", None, None, 730)),
    ("$2/hr, min. 1 month", (D(2), "hour", None, None, 730)),
    ("$1,200/mo (3-month minimum)", (D(1200), "month", None, None, 2190)),
    ("¥2/时 2小时起", (D(2), "hour", None, None, 2)),
    ("¥8000/卡/月 含税 3个月起", (D(8000), "month", True, None, 2190)),
]


@pytest.mark.parametrize(("text", "expected"), TERMS)
def test_tax_discount_and_minimum_term(text, expected):
    got = parse_price(text)
    said = (got.amount, got.period, got.tax_included, got.list_amount, got.min_term_hours)
    assert said == expected


def test_a_minimum_term_is_no_starting_price():
    assert not parse_price("¥8000/月 3个月起").is_starting_price
    starting = parse_price("48元起/小时")
    assert starting.is_starting_price and starting.min_term_hours is None


@pytest.mark.parametrize(("text", "reason"), [
    ("¥62/时 含税 不含税", "both tax-included and tax-excluded"),
    ("¥8000/月 3个月起 6个月起", "several minimum terms"),
    ("0个月起 ¥8000/月", "zero minimum term"),
    ("7折", "no price given"),
    ("原价¥2 现价¥3 (8折)", "original price below"),
    ("¥8000 3个月", "two prices"),              # a bare term is not read as one
])
def test_terms_unhappy(text, reason):
    _fails(text, reason)


DECORATIONS = [("{p} 含税", True, None), ("不含税 {p}", False, None),
               ("{p} excl. VAT", False, None), ("{p} 3个月起", None, 2190),
               ("{p}（7天起租）", None, 168), ("{p}, min. 1 year", None, 8760)]
BASES = [("¥{a}/小时", "CNY", "hour"), ("{a}元/月", "CNY", "month"), ("${a}/hr", "USD", "hour"),
         ("€{a}/day", "EUR", "day"), ("{a}元/卡/月", "CNY", "month")]


@settings(max_examples=300, deadline=None)
@given(amount=AMOUNTS, base=st.sampled_from(BASES), decoration=st.sampled_from(DECORATIONS))
def test_tax_and_term_markers_never_change_the_price(amount, base, decoration):
    text = decoration[0].format(p=base[0].format(a=amount))
    got = parse_price(text)
    assert (got.amount, got.currency, got.period) == (amount, base[1], base[2]), text
    assert (got.tax_included, got.min_term_hours) == decoration[1:]


# ---- periods: day, week, quarter, year --------------------------------------------------------

@pytest.mark.parametrize(("text", "amount", "period"), [
    ("¥6000/季度", D(6000), "quarter"), ("¥6000/季", D(6000), "quarter"),
    ("6000元/3个月", D(6000), "quarter"), ("$500 per quarter", D(500), "USD and quarter"),
    ("$500 quarterly", D(500), "USD and quarter"), ("6000元包季", D(6000), "quarter"),
    ("¥99/周", D(99), "week"), ("¥45/天", D(45), "day"), ("¥3.5万/年", D(35000), "year"),
    ("$20 per day", D(20), "USD and day"),
])
def test_periods(text, amount, period):
    got = parse_price(text)
    assert (got.amount, got.period) == (amount, period.split()[-1])


@pytest.mark.parametrize(("text", "period"), [
    ("季度", "quarter"), ("/季", "quarter"), ("quarterly", "quarter"), ("/3个月", "quarter"),
    ("包季", "quarter"), ("/月/卡", "month"), ("/GPU-hr", "hour")])
def test_parse_period_new_spellings(text, period):
    assert parse_period(text) == period


# ---- what a spider keeps on the raw item ------------------------------------------------------

@pytest.mark.parametrize(("text", "fields"), [
    ("20-30元/小时", {"price_low": "20", "price_high": "30"}),
    ("原价¥3.2 现价¥2.1/时", {"list_price_amount": "3.2"}),
    ("¥8000/月/卡 不含税 3个月起",
     {"price_per_card": True, "tax_included": False, "min_term_hours": 2190}),
    ("¥62/时", {}),
    ("面议", {}),                                 # no price: normalization says why
])
def test_raw_price_fields(text, fields):
    assert raw_price_fields(text) == fields
