"""The effects a simulation can inject, each a frozen dataclass with a `parse` for the CLI spec."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from pipelines.simulate.common import TIER1_PROVINCES, SimulationError

@dataclass(frozen=True)
class MonthEndDip:
    """Prices of `sources` (None: every source) are `size_pct` % lower during the last `days` UTC
    days of every month; with `availability`, every offer that states its stock is in stock then."""

    size_pct: float
    sources: tuple[str, ...] | None = None
    days: int = 5
    availability: bool = False

    def __post_init__(self) -> None:
        if not 0 < self.size_pct < 100:
            raise SimulationError(f"month-end dip: size must be between 0 and 100 %, "
                                  f"got {self.size_pct}")
        if not 1 <= self.days <= 28:
            raise SimulationError(f"month-end dip: days must be 1-28, got {self.days}")

    @classmethod
    def parse(cls, spec: str, availability: bool = False) -> MonthEndDip:
        """`SIZE_PCT[:SOURCES][:DAYS]`, e.g. `8:autodl_cn,idc_ulanqab:5`, `8` or `8::3`."""
        parts = spec.split(":")
        if len(parts) > 3 or not parts[0].strip():
            raise SimulationError(f"month-end dip {spec!r}: expected SIZE_PCT[:SOURCES][:DAYS]")
        try:
            size = float(parts[0])
            days = int(parts[2]) if len(parts) > 2 and parts[2].strip() else 5
        except ValueError as exc:
            raise SimulationError(f"month-end dip {spec!r}: {exc}") from exc
        sources = split_names(parts[1]) if len(parts) > 1 else None
        return cls(size, sources or None, days, availability)

    def applies_to(self, sources: np.ndarray) -> np.ndarray:
        if self.sources is None:
            return np.ones(len(sources), dtype=bool)
        return np.isin(sources, list(self.sources))


@dataclass(frozen=True)
class RegionalGap:
    """Offers in `province` (China) cost `pct` % less than the tier-1 cities (Beijing, Shanghai,
    Guangzhou, Shenzhen) for the same card, offer kind and billing period.

    The province's offers of each card/kind/period are scaled by one factor so that the province's
    median price per GPU-hour (a median of per-vendor medians, whole cards) is exactly
    (1 - pct/100) x the tier-1 median computed the same way; their relative prices (servers,
    slices, vendors) stay as they were. A card/kind/period without a tier-1 whole-card offer, or
    without a whole-card offer in the province, is left as it is."""

    province: str
    pct: float

    def __post_init__(self) -> None:
        if not -100 < self.pct < 100:
            raise SimulationError(f"regional gap: pct must be between -100 and 100, got {self.pct}")
        if self.province.strip().lower() in {p.lower() for p in TIER1_PROVINCES}:
            raise SimulationError(f"regional gap: {self.province} holds a tier-1 city (the "
                                  "reference itself); pick another province")

    @classmethod
    def parse(cls, spec: str) -> RegionalGap:
        """`PROVINCE:PCT`, e.g. `Inner Mongolia:25`."""
        province, sep, pct = spec.rpartition(":")
        if not sep or not province.strip():
            raise SimulationError(f"regional gap {spec!r}: expected PROVINCE:PCT")
        try:
            return cls(province.strip(), float(pct))
        except ValueError as exc:
            raise SimulationError(f"regional gap {spec!r}: {exc}") from exc


@dataclass(frozen=True)
class PriceDrop:
    """From `at` on (observed_at >= at), every price of `source` is `pct` % lower (negative: a
    rise)."""

    source: str
    pct: float
    at: datetime

    def __post_init__(self) -> None:
        if not -100 < self.pct < 100:
            raise SimulationError(f"price drop: pct must be between -100 and 100, got {self.pct}")
        if self.at.tzinfo is None:
            object.__setattr__(self, "at", self.at.replace(tzinfo=UTC))

    @classmethod
    def parse(cls, spec: str) -> PriceDrop:
        """`SOURCE:PCT:ISO_TIME`, e.g. `autodl_cn:10:2026-07-15T12:00` (UTC unless offset)."""
        parts = spec.split(":", 2)
        if len(parts) != 3:
            raise SimulationError(f"price drop {spec!r}: expected SOURCE:PCT:ISO_TIME")
        try:
            return cls(parts[0].strip(), float(parts[1]), datetime.fromisoformat(parts[2].strip()))
        except ValueError as exc:
            raise SimulationError(f"price drop {spec!r}: {exc}") from exc


Effect = MonthEndDip | RegionalGap | PriceDrop


def split_names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())

