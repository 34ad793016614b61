"""The units Chinese marketplace APIs write prices and sizes in: one table, with its evidence.

A spider reads an API's raw number together with the unit its evidence names, and turns it into
元 (or GiB) here, never in its own code: `yuan("2720", "厘") == "2.72"`. A unit the table does not
hold, or a value that is not a plain non-negative number, raises UnitError: the spider then hands
the raw field to normalization unpriced, which quarantines it with the reason, instead of guessing.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from .currencies import SUB_UNITS

# unit -> (元 per unit, where the unit is known from); 厘's factor is the one the price grammar
# reads in text ("2720厘/时"), from the sub-unit table in currencies.py.
PRICE_UNITS: dict[str, tuple[Decimal, str]] = {
    "元": (Decimal(1), "GPUSHARE skuList[].price, shown as ¥{price}/h by public monitor scripts"),
    "厘": (SUB_UNITS["厘"].factor, "AutoDL payg_price: 2720 is 2.72 元 per card-hour "
                                  "(cn-prices.md §5; real-payloads/README.md; 1577 in the "
                                  "2024-11 capture)"),
    "millicent": (Decimal("0.00001"), "Matpool machine_pools hardware.*PriceMillicent / 100000 "
                                      "is 元 per hour per unit (cn-prices.md §5, 2026-09-07)"),
}
# unit -> bytes
SIZE_UNITS: dict[str, int] = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


class UnitError(ValueError):
    """A raw API value that cannot be read in the unit the evidence names."""


def _plain(value: object, unit: str) -> Decimal:
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        raise UnitError(f"{value!r} is not a number of {unit}")
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation as exc:
        raise UnitError(f"{value!r} is not a number of {unit}") from exc
    if not number.is_finite() or number < 0:
        raise UnitError(f"{value!r} is not a non-negative number of {unit}")
    return number


def _text(number: Decimal) -> str:
    return format(number.normalize(), "f")


def yuan(value: object, unit: str) -> str:
    """The amount in 元 as a decimal string: `yuan(2720, "厘") == "2.72"`."""
    if unit not in PRICE_UNITS:
        raise UnitError(f"unknown price unit {unit!r} (known: {', '.join(PRICE_UNITS)})")
    return _text(_plain(value, unit) * PRICE_UNITS[unit][0])


def gib(value: object, unit: str = "B") -> str:
    """A size in GiB as a decimal string: `gib(96636764160) == "90"`."""
    if unit not in SIZE_UNITS:
        raise UnitError(f"unknown size unit {unit!r} (known: {', '.join(SIZE_UNITS)})")
    return _text(_plain(value, unit) * SIZE_UNITS[unit] / SIZE_UNITS["GiB"])
