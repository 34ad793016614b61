"""The units vendors' APIs serve prices and sizes in: one table, with its evidence, read by
normalization only (pipelines/normalize/offer.py). A spider hands the number as served with the
unit its evidence names (`price_amount=2720, price_unit="厘"`, `memory=96636764160,
memory_unit="B"`); normalization converts it here: `major_units(2720, "厘") == Decimal("2.72")`.

A unit the table does not hold, or a value that is not a plain non-negative number, raises
UnitError: normalization quarantines the offer with the reason (a size: the offer keeps its
price and loses the spec), instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from .currencies import SUB_UNITS


@dataclass(frozen=True)
class PriceUnit:
    currency: str | None   # the currency the unit belongs to; None: a cent of the one named
    factor: Decimal        # major units (元, dollars) per one of this unit
    evidence: str


# price_unit -> what one of it is. 厘's and cents' factors are the ones the price grammar reads
# in text ("2720厘/时", "429 cents/hr"), from the sub-unit table in currencies.py.
PRICE_UNITS: dict[str, PriceUnit] = {
    "元": PriceUnit("CNY", Decimal(1), "GPUSHARE skuList[].price, shown as ¥{price}/h by public "
                                       "monitor scripts"),
    "厘": PriceUnit("CNY", SUB_UNITS["厘"].factor,
                   "AutoDL payg_price: 2720 is 2.72 元 per card-hour (docs/sources.md, AutoDL; "
                   "1577 in the 2024-11 capture)"),
    "millicent": PriceUnit("CNY", Decimal("0.00001"),
                           "Matpool machine_pools hardware.*PriceMillicent / 100000 is 元 per "
                           "hour per unit (docs/sources.md, Matpool: the 2026-09-07 note)"),
    "cents": PriceUnit(SUB_UNITS["cents"].currency, SUB_UNITS["cents"].factor,
                       "Lambda Cloud instance-types price_cents_per_hour (cloud.lambda.ai API "
                       "docs)"),
    # A per-second rate read with billing period "hour": 3600 seconds of a millionth of a 元.
    "微元/秒": PriceUnit("CNY", Decimal("0.0036"),
                        "共绩算力 device price: 'API 价格单位是微元/秒', shown as price * 3600 / "
                        "1000000 元/h (shaozheng0503/gongjiskills gongjiskills/cli.py @ 2ff6756)"),
}
# size unit -> bytes. "MB"/"GB" as vendors' APIs write memory (vast.ai cpu_ram and gpu_ram,
# Vultr ram, RunPod and Tencent memory): binary, as RAM is sold ("a 64GB instance has 64 GiB").
SIZE_UNITS: dict[str, int] = {"B": 1, "KiB": 2**10, "MiB": 2**20, "MB": 2**20, "GiB": 2**30,
                              "GB": 2**30, "TiB": 2**40}


class UnitError(ValueError):
    """A served value that cannot be read in the unit the evidence names."""


def plain_number(value: object, unit: str) -> Decimal:
    """`value` (a JSON number or a decimal string as served) as a non-negative Decimal."""
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        raise UnitError(f"{value!r} is not a number of {unit}")
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation as exc:
        raise UnitError(f"{value!r} is not a number of {unit}") from exc
    if not number.is_finite() or number < 0:
        raise UnitError(f"{value!r} is not a non-negative number of {unit}")
    return number


def _exact(number: Decimal) -> Decimal:
    """Trailing zeros dropped, never an exponent: 2.72, not 2.720; 10, not 1E+1."""
    return Decimal(format(number.normalize(), "f"))


def price_unit(unit: str) -> PriceUnit:
    if unit not in PRICE_UNITS:
        raise UnitError(f"unknown price unit {unit!r} (known: {', '.join(PRICE_UNITS)})")
    return PRICE_UNITS[unit]


def major_units(value: object, unit: str) -> Decimal:
    """An amount served in `unit`, in its currency's major unit: 2720 厘 is 2.72 (元)."""
    return _exact(plain_number(value, unit) * price_unit(unit).factor)


def size_in(value: object, unit: str, to: str) -> Decimal:
    """A size served in `unit` in unit `to`: `size_in(96636764160, "B", "GiB") == 90`."""
    for name in (unit, to):
        if name not in SIZE_UNITS:
            raise UnitError(f"unknown size unit {name!r} (known: {', '.join(SIZE_UNITS)})")
    return _exact(plain_number(value, unit) * SIZE_UNITS[unit] / SIZE_UNITS[to])
