"""Units inside amounts (issue 25 item 5): 角/毛/分/厘, 仙, pence/p and cents/cent/ct/¢/c, with
万/千/k, in ranges and per-card prices. A sub-unit names its currency and wins over a source's
default; a cent is one of the currency the text (else the default) names; contradictions raise."""

from __future__ import annotations

from decimal import Decimal as D

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spiders.parsing.currencies import SUB_UNITS
from spiders.parsing.prices import PriceParseError, parse_price
from spiders.parsing.units import PRICE_UNITS, major_units

# Written here, not read from SUB_UNITS, so that a wrong factor in the table fails a test:
# unit -> (major units per unit, its currency; None: a cent of the named currency)
EXPECTED = {
    "角": (D("0.1"), "CNY"), "毛": (D("0.1"), "CNY"), "分": (D("0.01"), "CNY"),
    "厘": (D("0.001"), "CNY"), "仙": (D("0.01"), "HKD"),
    "pence": (D("0.01"), "GBP"), "penny": (D("0.01"), "GBP"), "p": (D("0.01"), "GBP"),
    "cents": (D("0.01"), None), "cent": (D("0.01"), None), "cts": (D("0.01"), None),
    "ct": (D("0.01"), None), "¢": (D("0.01"), None), "c": (D("0.01"), None),
}
CENT_SOURCE = "USD"    # the default currency a cent-style case runs with


def _fails(text: str, reason: str, **kwargs) -> None:
    with pytest.raises(PriceParseError) as err:
        parse_price(text, **kwargs)
    assert reason in str(err.value), str(err.value)


def test_every_sub_unit_in_the_table_has_an_expected_row():
    assert set(SUB_UNITS) == set(EXPECTED)
    assert {u: (s.factor, s.currency) for u, s in SUB_UNITS.items()} == EXPECTED


# template -> (amount multiplier, period, per_card); {n} is the number, {u} the sub-unit.
SPELLINGS = [
    ("{n}{u}/hr", 1, "hour", False), ("{n} {u}/hr", 1, "hour", False),
    ("{n} {u} per hour", 1, "hour", False), ("{n}{u}/小时", 1, "hour", False),
    ("{n} {u} / month", 1, "month", False), ("{n}千{u}/小时", 1000, "hour", False),
    ("{n}万{u}/月", 10000, "month", False), ("{n}k {u}/hr", 1000, "hour", False),
    ("{n} {u}/GPU/hr", 1, "hour", True), ("{n} {u} per GPU per hour", 1, "hour", True),
    ("{n}{u}/卡/时", 1, "hour", True),
]
# Only a symbol stands before the number ("¢99/hr"); nobody writes "分5" or "cents 5".
BEFORE = [("{u}{n}/hr", 1, "hour", False), ("{u} {n}/hr", 1, "hour", False)]


def _cases():
    for unit, (factor, currency) in EXPECTED.items():
        spellings = SPELLINGS + (BEFORE if not unit.isalnum() else [])
        for template, mult, period, per_card in spellings:
            yield unit, template, factor * mult, currency or CENT_SOURCE, period, per_card


@pytest.mark.parametrize(("unit", "template", "factor", "currency", "period", "per_card"),
                         list(_cases()))
def test_sub_unit_in_every_position(unit, template, factor, currency, period, per_card):
    for n in (D(429), D("2.5")):
        # the sub-unit wins over the default: "272分" is CNY even for a USD source
        got = parse_price(template.format(n=n, u=unit), default_currency=CENT_SOURCE)
        assert (got.amount, got.currency, got.period, got.per_card) == (
            n * factor, currency, period, per_card)


@pytest.mark.parametrize("unit", sorted(EXPECTED))
def test_sub_unit_ranges(unit):
    factor, currency = EXPECTED[unit]
    spellings = ["3-5 {u}/hr", "3 {u} - 5 {u}/hr", "3~5{u}/hr", "3 to 5 {u} per hour"]
    spellings += ["{u}3-5/hr", "{u}3 - {u}5/hr"] if not unit.isalnum() else []
    for spelling in spellings:
        got = parse_price(spelling.format(u=unit), default_currency=CENT_SOURCE, range_end="high")
        assert (got.price_low, got.price_high, got.amount, got.currency, got.period) == (
            3 * factor, 5 * factor, 5 * factor, currency or CENT_SOURCE, "hour"), spelling


# text, default_currency -> (amount, currency, period)
NAMED = [
    ("429 cents/hr", "USD", (D("4.29"), "USD", "hour")),       # the user's report: not $429
    ("$429 cents/hr", None, (D("4.29"), "USD", "hour")),
    ("$429 cents/hr", "HKD", (D("4.29"), "HKD", "hour")),      # a bare $ is the source's dollar
    ("429 cents USD/hr", None, (D("4.29"), "USD", "hour")),
    ("US$ 99¢/hr", None, (D("0.99"), "USD", "hour")),
    ("€ 35 ct/h", None, (D("0.35"), "EUR", "hour")),
    ("35 ct/h", "EUR", (D("0.35"), "EUR", "hour")),
    ("£50 pence/hr", None, (D("0.50"), "GBP", "hour")),
    ("£5 cents/hr", None, (D("0.05"), "GBP", "hour")),        # GBP has a hundredth
    ("50p/hr", "USD", (D("0.50"), "GBP", "hour")),             # pence name GBP over the default
    ("¥272分/时", "JPY", (D("2.72"), "CNY", "hour")),           # 分 makes the ¥ a yuan
    ("272分/时", "USD", (D("2.72"), "CNY", "hour")),
    ("2720厘/时", "EUR", (D("2.72"), "CNY", "hour")),
    ("50仙/小时", None, (D("0.50"), "HKD", "hour")),
    ("HK$50仙/小时", None, (D("0.50"), "HKD", "hour")),
    ("5 cents/hr", "CNY", (D("0.05"), "CNY", "hour")),         # a cent of the default
    ("¥5 cents/hr", None, (D("0.05"), "CNY", "hour")),
    ("300分-5元/时", None, (None, "CNY", "hour")),              # 3 to 5 元
    ("原价 500 cents 现价 429 cents/hr", "USD", (D("4.29"), "USD", "hour")),
]


@pytest.mark.parametrize(("text", "default", "expected"), NAMED)
def test_sub_unit_and_named_currency(text, default, expected):
    got = parse_price(text, default_currency=default)
    assert (got.amount, got.currency, got.period) == expected


def test_a_list_price_in_cents_keeps_its_factor():
    got = parse_price("was 500 cents now 429 cents/hr", default_currency="USD")
    assert (got.list_amount, got.amount) == (D(5), D("4.29"))


@pytest.mark.parametrize(("text", "kwargs", "reason"), [
    # a sub-unit that contradicts an explicit currency
    ("€ 5 分", {}, "'分' is a sub-unit of CNY, but '€ 5 分' also names €"),
    ("€5分/h", {}, "sub-unit of CNY"),
    ("$272分/时", {}, "sub-unit of CNY"),
    ("$5 pence/hr", {}, "'pence' is a sub-unit of GBP"),
    ("USD 50p/hr", {}, "sub-unit of GBP"),
    ("HK$5厘/时", {}, "sub-unit of CNY"),
    ("5分 - 10 pence/hr", {}, "sub-units of CNY and GBP"),
    ("€5 cents $/hr", {}, "currency symbol conflicts"),
    # a cent of no known currency
    ("429 cents/hr", {}, "'cents' is a cent of no known currency"),
    ("¢99/hr", {}, "cent of no known currency"),
    ("429 cents/小时", {}, "cent of no known currency"),    # 小时 implies no currency for cents
    ("500 cents/hr", {"default_currency": "JPY"}, "JPY has no cents"),
    ("₩500 cents/hr", {}, "KRW has no cents"),
    ("¥500 cents/hr", {"default_currency": "JPY"}, "JPY has no cents"),
    # a sub-unit word that no amount carries: the amount would be read in major units
    ("in cents: 429/hr", {"default_currency": "USD"}, "'cents' stands apart from the amount"),
    ("$429/hr (cents)", {}, "stands apart"),
    ("price in ¢: 429/hr", {"default_currency": "USD"}, "stands apart"),
    # the rest of the grammar still applies
    ("0 cents/hr", {"default_currency": "USD"}, "zero amount"),
    ("0厘/时", {}, "zero amount"),
    ("5 cents/min", {"default_currency": "USD"}, "per minute"),
    ("¥0.01/分钟", {}, "per minute"),
    ("2分钟", {}, "no currency"),                            # minutes, not 分
    ("5 - 3 cents/hr", {"default_currency": "USD"}, "upper end"),
    ("2元7角/时", {}, "two prices"),          # compound amounts are refused, never half-read
])
def test_sub_units_unhappy(text, kwargs, reason):
    _fails(text, reason, **kwargs)


@pytest.mark.parametrize(("text", "amount"), [
    ("2720厘/时", D("2.72")), ("¥2720厘/时", D("2.72")), ("272分/时", D("2.72")),
    ("27.2角/时", D("2.72")), ("27.2毛/时", D("2.72")), ("2.72元/时", D("2.72")),
    ("1.2千/时", D(1200)), ("2k元/时", D(2000)), ("12万/时", D(120000)), ("0.5万元/时", D(5000)),
    ("1.2万厘/时", D(12)), ("300-500分/时", None),
])
def test_chinese_units_need_no_currency(text, amount):
    got = parse_price(text)
    assert (got.amount, got.currency, got.period) == (amount, "CNY", "hour")


@pytest.mark.parametrize(("text", "reading"), [
    ("4c8g ¥2/时", "no sub-unit"), ("5 cad/hr", "CAD"), ("5 c$/hr", "CAD"), ("5 chf/hr", "CHF"),
    ("3 per hour", "no sub-unit"), ("$2 percent", "no sub-unit"),
])
def test_letters_that_are_no_sub_unit(text, reading):
    try:
        got = parse_price(text, default_currency="USD")
    except PriceParseError as err:
        assert "sub-unit" not in str(err) and "cent" not in str(err)
    else:
        assert got.amount >= 1 and (reading == "no sub-unit" or got.currency == reading)


def test_served_units_read_li_from_the_same_table():
    assert PRICE_UNITS["厘"].factor is SUB_UNITS["厘"].factor
    assert major_units(2720, "厘") == parse_price("2720厘/时").amount == D("2.72")


UNITS = sorted(EXPECTED)


@settings(max_examples=400, deadline=None)
@given(n=st.integers(1, 10 ** 7), places=st.integers(0, 3), unit=st.sampled_from(UNITS),
       space=st.sampled_from(["", " "]),
       default=st.sampled_from(["USD", "EUR", "GBP", "CNY", "AUD"]))
def test_n_sub_units_is_n_times_factor_major_units(n, places, unit, space, default):
    amount = D(n).scaleb(-places)
    factor, currency = EXPECTED[unit]
    got = parse_price(f"{amount}{space}{unit}/hr", default_currency=default)
    assert (got.amount, got.currency, got.period) == (amount * factor, currency or default, "hour")


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 10 ** 6), unit=st.sampled_from(UNITS),
       explicit=st.sampled_from(["$", "€", "£", "¥", "HK$", "CHF "]))
def test_a_sub_unit_with_an_explicit_currency_agrees_or_raises(n, unit, explicit):
    text = f"{explicit}{n} {unit}/hr"
    factor, owner = EXPECTED[unit]
    try:
        got = parse_price(text)
    except PriceParseError as err:
        assert owner is not None and f"sub-unit of {owner}" in str(err), text
    else:
        assert got.amount == n * factor and (owner is None or got.currency == owner), text
