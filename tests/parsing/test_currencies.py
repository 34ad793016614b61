"""Currency tokens -> ISO codes; dated ECB rates with an honest rate date."""

from __future__ import annotations

import csv
import io
import zipfile
from datetime import date, timedelta
from decimal import Decimal as D
from functools import lru_cache
from pathlib import Path

import currency_converter
import pytest

from spiders.parsing.currencies import (
    CENT_CURRENCIES,
    KNOWN_CURRENCIES,
    CurrencyError,
    FxRate,
    FxRateError,
    convert,
    fx_rate,
    iso_currency,
    may_mean,
    price_currency,
)


@lru_cache(maxsize=1)
def ecb_table() -> dict[date, dict[str, D]]:
    """The ECB history straight from the wheel's zip: an oracle independent of fx_rate()."""
    path = Path(currency_converter.__file__).with_name("eurofxref-hist.zip")
    with zipfile.ZipFile(path) as zf:
        text = zf.read("eurofxref-hist.csv").decode("utf-8")
    table = {}
    for row in csv.DictReader(io.StringIO(text)):
        rates = {k: D(v) for k, v in row.items() if k and k != "Date" and v not in ("", "N/A")}
        table[date.fromisoformat(row["Date"])] = {**rates, "EUR": D(1)}
    return table


def ecb_cross(src: str, dst: str, day: date) -> D:
    rates = ecb_table()[day]
    return rates[dst] / rates[src]


@pytest.mark.parametrize(("token", "code"), [
    ("¥", "CNY"), ("￥", "CNY"), ("元", "CNY"), ("RMB", "CNY"), ("rmb", "CNY"), ("CNY", "CNY"),
    ("人民币", "CNY"), ("$", "USD"), ("US$", "USD"), ("USD", "USD"), ("usd", "USD"),
    ("美元", "USD"), ("€", "EUR"), ("EUR", "EUR"), ("HK$", "HKD"), ("HKD", "HKD"), ("港币", "HKD"),
    ("£", "GBP"), ("GBP", "GBP"), ("JPY", "JPY"), ("円", "JPY"), ("S$", "SGD"), ("SGD", "SGD"),
    ("₩", "KRW"), ("KRW", "KRW"), (" ¥ ", "CNY")])
def test_iso_currency(token, code):
    assert iso_currency(token) == code


@pytest.mark.parametrize("token", ["", "XYZ", "BTC", "dollars?", "RUB", "₽", "kr"])
def test_iso_currency_rejects_unknown(token):
    with pytest.raises(CurrencyError, match="unknown currency"):
        iso_currency(token)


def test_known_currencies_are_all_convertible():
    for code in KNOWN_CURRENCIES:
        assert fx_rate(code, "USD", date(2026, 10, 28)).rate > 0
    assert {"CNY", "USD", "EUR", "HKD", "JPY", "GBP", "SGD", "KRW"} <= KNOWN_CURRENCIES


def test_weekday_rate_is_that_days_ecb_cross_rate():
    wednesday = date(2026, 10, 28)
    fx = fx_rate("CNY", "USD", wednesday)
    assert fx.rate_date == wednesday
    assert abs(fx.rate - ecb_cross("CNY", "USD", wednesday)) < D("1e-20")
    assert D("0.10") < fx.rate < D("0.20")   # sanity: a yuan is 10-20 US cents


def test_saturday_uses_fridays_rate():
    saturday, friday = date(2026, 10, 24), date(2026, 10, 23)
    assert saturday.weekday() == 5 and saturday not in ecb_table()
    fx = fx_rate("CNY", "USD", saturday)
    assert fx.rate_date == friday
    assert abs(fx.rate - ecb_cross("CNY", "USD", friday)) < D("1e-20")


@pytest.mark.parametrize(("day", "ecb_day"), [
    (date(2026, 10, 25), date(2026, 10, 23)),   # Sunday
    (date(2025, 12, 26), date(2025, 12, 24)),   # Christmas holidays: no interpolation
    (date(2026, 4, 6), date(2026, 4, 2)),       # Easter Monday -> Thursday before Good Friday
])
def test_gaps_walk_back_to_last_ecb_date(day, ecb_day):
    assert fx_rate("USD", "CNY", day).rate_date == ecb_day


def test_after_the_bundled_data_uses_last_date_and_says_so():
    fx = fx_rate("CNY", "USD", date(2026, 11, 30))
    last = max(ecb_table())
    assert fx.rate_date <= date(2026, 10, 30)
    assert fx.rate_date == last
    assert fx.rate == fx_rate("CNY", "USD", last).rate


def test_inverse_rate():
    day = date(2026, 10, 28)
    forward, back = fx_rate("CNY", "USD", day).rate, fx_rate("USD", "CNY", day).rate
    assert abs(forward * back - 1) < D("1e-20")


def test_same_currency_is_one_on_the_requested_date():
    assert fx_rate("CNY", "CNY", date(2026, 11, 30)) == FxRate(D(1), date(2026, 11, 30))


def test_cross_rate_through_eur():
    day = date(2026, 10, 28)
    assert abs(fx_rate("HKD", "JPY", day).rate - ecb_cross("HKD", "JPY", day)) < D("1e-20")
    assert abs(fx_rate("EUR", "USD", day).rate - ecb_table()[day]["USD"]) < D("1e-20")


@pytest.mark.parametrize(("src", "dst", "day", "message"), [
    ("XYZ", "USD", date(2026, 10, 28), "unknown currency"),
    ("CNY", "BTC", date(2026, 10, 28), "unknown currency"),
    ("CNY", "RUB", date(2026, 10, 28), "unknown currency"),   # ECB suspended RUB in 2022
    ("CNY", "USD", date(2005, 3, 31), "data starts 2005-04-01"),
    ("USD", "EUR", date(1998, 12, 31), "data starts 1999-01-04"),
])
def test_fx_rate_errors(src, dst, day, message):
    with pytest.raises(FxRateError, match=message):
        fx_rate(src, dst, day)


def test_first_available_date_works():
    assert fx_rate("CNY", "USD", date(2005, 4, 1)).rate_date == date(2005, 4, 1)


def test_convert_returns_amount_and_rate_date():
    amount, rate_date = convert(D("100"), "CNY", "USD", date(2026, 10, 24))
    assert rate_date == date(2026, 10, 23)
    assert abs(amount - 100 * ecb_cross("CNY", "USD", rate_date)) < D("1e-18")
    assert isinstance(amount, D)


def test_every_day_of_a_month_gets_a_real_ecb_date_not_after_it():
    start = date(2026, 9, 1)
    for offset in range(61):
        day = start + timedelta(days=offset)
        fx = fx_rate("CNY", "USD", day)
        assert fx.rate_date <= day and fx.rate_date in ecb_table()
        assert (day - fx.rate_date).days <= 4 or day > max(ecb_table())


def test_cent_currencies_are_the_known_ones_with_a_hundredth():
    # ISO 4217 gives ISK, JPY and KRW no minor unit; every other known currency has two digits.
    assert sorted(KNOWN_CURRENCIES - CENT_CURRENCIES) == ["ISK", "JPY", "KRW"]
    assert {"USD", "EUR", "GBP", "CNY", "HKD", "CHF"} <= CENT_CURRENCIES


@pytest.mark.parametrize(("token", "code", "expected"), [
    ("$", "USD", True), ("$", "HKD", True), ("$", "EUR", False), ("¥", "JPY", True),
    ("￥", "CNY", True), ("¥", "HKD", False), ("€", "EUR", True), ("€", "CNY", False),
    ("hk$", "HKD", True), ("hk$", "USD", False), ("元", "CNY", True),
])
def test_may_mean(token, code, expected):
    assert may_mean(token, code) is expected


# tokens, sub-units, default, implied -> currency
@pytest.mark.parametrize(("tokens", "subs", "default", "implied", "code"), [
    (set(), {"分"}, "USD", None, "CNY"),           # a sub-unit wins over the default
    ({"¥"}, {"分"}, "JPY", None, "CNY"),           # and decides what a bare ¥ is
    (set(), {"cents"}, "EUR", "CNY", "EUR"),       # a cent is one of the default
    ({"$"}, {"cents"}, "HKD", None, "HKD"),
    ({"£"}, {"pence"}, None, None, "GBP"),
    (set(), set(), None, "CNY", "CNY"),
    ({"$"}, set(), "SGD", None, "SGD"),
])
def test_price_currency(tokens, subs, default, implied, code):
    assert price_currency(tokens, subs, "text", default, implied) == code


@pytest.mark.parametrize(("tokens", "subs", "default", "implied", "reason"), [
    ({"€"}, {"分"}, None, None, "'分' is a sub-unit of CNY, but 'text' also names €"),
    ({"$"}, {"p"}, None, None, "sub-unit of GBP"),
    (set(), {"分", "pence"}, None, None, "sub-units of CNY and GBP"),
    (set(), {"cents"}, None, "CNY", "cent of no known currency"),
    (set(), {"c"}, "JPY", None, "JPY has no cents"),
    ({"€", "£"}, set(), None, None, "mixed currencies"),
    (set(), set(), None, None, "no currency"),
])
def test_price_currency_refuses_contradictions(tokens, subs, default, implied, reason):
    with pytest.raises(CurrencyError) as err:
        price_currency(tokens, subs, "text", default, implied)
    assert reason in str(err.value)
