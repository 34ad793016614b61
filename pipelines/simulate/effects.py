"""The time effects a simulation can inject (month-end dip, trend, price drop, month-end listing
churn, exchange-rate move), each a frozen dataclass with a `parse` for the CLI spec, and
`effect_record`, the JSON form `truth.scenario.effects` keeps. The structural effects (regional
gap, region copies, slice/server/spot/monthly ratios) are in `structure.py`."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

from pipelines.simulate.common import SimulationError
from pipelines.simulate.structure import (
    MonthlyRatio,
    RegionalGap,
    RegionCopy,
    ServerRatio,
    SliceRatio,
    SpotRatio,
)


def _utc(moment: datetime) -> datetime:
    """A naive time is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _name_pct_time(spec: str, what: str, name: str) -> tuple[str, float, datetime]:
    """`NAME:PCT:ISO_TIME` (the time may hold colons), e.g. `autodl_cn:10:2026-07-15T12:00`."""
    parts = spec.split(":", 2)
    if len(parts) != 3:
        raise SimulationError(f"{what} {spec!r}: expected {name}:PCT:ISO_TIME")
    try:
        return parts[0].strip(), float(parts[1]), datetime.fromisoformat(parts[2].strip())
    except ValueError as exc:
        raise SimulationError(f"{what} {spec!r}: {exc}") from exc


@dataclass(frozen=True)
class MonthEndDip:
    """Prices of `sources` (None: every source) are `size_pct` % lower during the last `days` days
    of every month of the vendor's local calendar (`calendar.local_time_zone`), back on local day
    1; with `availability`, every offer that states its stock is in stock then."""

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
        return _members(self.sources, sources)


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
        object.__setattr__(self, "at", _utc(self.at))

    @classmethod
    def parse(cls, spec: str) -> PriceDrop:
        """`SOURCE:PCT:ISO_TIME`, e.g. `autodl_cn:10:2026-07-15T12:00` (UTC unless offset)."""
        return cls(*_name_pct_time(spec, "price drop", "SOURCE"))


@dataclass(frozen=True)
class Trend:
    """Prices of `sources` (None: every source) change steadily by `pct_per_30_days` % every 30
    days (720 hours), compounding per hour, from `since` on (None: the simulation's start, which
    `append_hour` reads back from `truth.scenario`); negative is a decline. Before `since` prices
    are untouched."""

    pct_per_30_days: float
    sources: tuple[str, ...] | None = None
    since: datetime | None = None

    def __post_init__(self) -> None:
        if not -100 < self.pct_per_30_days <= 1000:
            raise SimulationError(f"trend: % per 30 days must be above -100 (and at most 1000), "
                                  f"got {self.pct_per_30_days}")
        if self.since is not None and self.since.tzinfo is None:
            object.__setattr__(self, "since", self.since.replace(tzinfo=UTC))

    @classmethod
    def parse(cls, spec: str) -> Trend:
        """`PCT[:SOURCES]`, e.g. `-9` (every source) or `-9:autodl_cn,idc_ulanqab`."""
        pct, _, sources = spec.partition(":")
        try:
            return cls(float(pct), split_names(sources) or None)
        except ValueError as exc:
            raise SimulationError(f"trend {spec!r}: expected PCT[:SOURCES] ({exc})") from exc

    def applies_to(self, sources: np.ndarray) -> np.ndarray:
        return _members(self.sources, sources)


CHURN_MODES = ("vanish", "appear")
CHURN_SUFFIX = "#month-end"      # offer_id and sku suffix of the listings that appear


@dataclass(frozen=True)
class MonthEndChurn:
    """Listings that come and go with the vendor's local month end; prices do not move.

    mode 'vanish': a seeded `share` of the `sources`' offers (None: every source) is not listed
    at all (no observation) in the last `days` local days of each month, and is back on day 1.
    mode 'appear': extra listings (clones of a seeded `share` of the offers, offer_id and sku
    suffixed `#month-end`, same price path, in stock) are listed only in those days."""

    mode: str
    sources: tuple[str, ...] | None = None
    days: int = 5
    share: float = 0.5

    def __post_init__(self) -> None:
        if self.mode not in CHURN_MODES:
            raise SimulationError(f"churn: mode must be vanish or appear, got {self.mode!r}")
        if not 1 <= self.days <= 28:
            raise SimulationError(f"churn: days must be 1-28, got {self.days}")
        if not 0 < self.share <= 1:
            raise SimulationError(f"churn: share must be in (0, 1], got {self.share}")

    @classmethod
    def parse(cls, spec: str) -> MonthEndChurn:
        """`vanish|appear[:SOURCES][:DAYS][:SHARE]`, e.g. `vanish`, `appear:autodl_cn:3:0.25`."""
        parts = spec.split(":")
        if len(parts) > 4:
            raise SimulationError(f"churn {spec!r}: expected "
                                  "vanish|appear[:SOURCES][:DAYS][:SHARE]")
        parts += [""] * (4 - len(parts))
        try:
            return cls(parts[0].strip(), split_names(parts[1]) or None,
                       int(parts[2]) if parts[2].strip() else 5,
                       float(parts[3]) if parts[3].strip() else 0.5)
        except ValueError as exc:
            raise SimulationError(f"churn {spec!r}: {exc}") from exc

    def applies_to(self, sources: np.ndarray) -> np.ndarray:
        return _members(self.sources, sources)


@dataclass(frozen=True)
class FxMove:
    """From `at` on (observed_at >= at), one unit of `currency` is worth `pct` % more CNY (and, for
    a currency other than USD, `pct` % more USD): offers listed in it keep their listed
    `price_amount`, their CNY (and USD) price per GPU-hour moves."""

    currency: str
    pct: float
    at: datetime

    def __post_init__(self) -> None:
        object.__setattr__(self, "currency", self.currency.strip().upper())
        if not re.fullmatch(r"[A-Z]{3}", self.currency) or self.currency == "CNY":
            raise SimulationError(f"fx move: currency must be a 3-letter code other than CNY, "
                                  f"got {self.currency!r}")
        if not -100 < self.pct < 1000:
            raise SimulationError(f"fx move: pct must be above -100, got {self.pct}")
        object.__setattr__(self, "at", _utc(self.at))

    @classmethod
    def parse(cls, spec: str) -> FxMove:
        """`CURRENCY:PCT:ISO_TIME`, e.g. `USD:5:2026-07-10T00:00` (UTC unless offset)."""
        return cls(*_name_pct_time(spec, "fx move", "CURRENCY"))


@dataclass(frozen=True)
class Outage:
    """`source` is not seen at all (no crawl, no observation) for `days` days from `at` on: a
    vendor gone dark; its prices do not change meanwhile."""

    source: str
    days: float
    at: datetime

    def __post_init__(self) -> None:
        if not 0 < self.days <= 366:
            raise SimulationError(f"outage: days must be in (0, 366], got {self.days}")
        object.__setattr__(self, "at", _utc(self.at))

    @classmethod
    def parse(cls, spec: str) -> Outage:
        """`SOURCE:DAYS:ISO_TIME`, e.g. `autodl_cn:7:2026-07-10T00:00` (UTC unless offset)."""
        return cls(*_name_pct_time(spec, "outage", "SOURCE"))


@dataclass(frozen=True)
class Typo:
    """One offer of `source` (its first by offer_id) is listed at `factor` x its price for
    `hours` hours from `at` on: a mistyped price (10 = one zero too many), not a market move."""

    source: str
    factor: float
    at: datetime
    hours: int = 24

    def __post_init__(self) -> None:
        if not 0 < self.factor <= 1000 or self.factor == 1:
            raise SimulationError(f"typo: factor must be in (0, 1000] and not 1, "
                                  f"got {self.factor}")
        if not 1 <= self.hours <= 24 * 366:
            raise SimulationError(f"typo: hours must be 1 to {24 * 366}, got {self.hours}")
        object.__setattr__(self, "at", _utc(self.at))

    @classmethod
    def parse(cls, spec: str) -> Typo:
        """`SOURCE:FACTOR:ISO_TIME`, e.g. `autodl_cn:10:2026-07-10T09:00` (24 hours)."""
        return cls(*_name_pct_time(spec, "typo", "SOURCE"))


@dataclass(frozen=True)
class Spike:
    """Every price of `source` is `pct` % higher for `hours` hours from `at` on, then back; one
    hour after the back-move the source goes dark for `dark_hours` hours, so the back-move is
    seen only in an early look that is its day's stale close: a move that reverts across a
    stale close (a promotion, a price mis-set for a few hours)."""

    source: str
    pct: float
    at: datetime
    hours: int = 6
    dark_hours: int = 23

    def __post_init__(self) -> None:
        if not -100 < self.pct <= 1000 or self.pct == 0:
            raise SimulationError(f"spike: pct must be in (-100, 1000] and not 0, got {self.pct}")
        if not 1 <= self.hours <= 24 * 31 or not 0 <= self.dark_hours <= 24 * 31:
            raise SimulationError(f"spike: hours must be 1-{24 * 31} and dark hours 0-{24 * 31}")
        object.__setattr__(self, "at", _utc(self.at))

    @classmethod
    def parse(cls, spec: str) -> Spike:
        """`SOURCE:PCT:ISO_TIME`, e.g. `lambda_cloud:80:2026-07-10T18:00` (6 h, then 23 h dark)."""
        return cls(*_name_pct_time(spec, "spike", "SOURCE"))

    @property
    def seen_until(self) -> datetime:
        """The end of the dark hours: the first fresh close after it shows the spike gone."""
        return self.at + timedelta(hours=self.hours + 1 + self.dark_hours)


@dataclass(frozen=True)
class Jitter:
    """From `since` on, every price of `source` moves each UTC day by a factor drawn anew that
    day, uniform in log between 1/(1 + pct/100) and 1 + pct/100 (a hash of the source and the
    day, pipelines.simulate.index_effects.jitter_log): a vendor whose prices move daily."""

    source: str
    pct: float
    since: datetime

    def __post_init__(self) -> None:
        if not 0 < self.pct <= 100:
            raise SimulationError(f"jitter: pct must be in (0, 100], got {self.pct}")
        object.__setattr__(self, "since", _utc(self.since))

    @classmethod
    def parse(cls, spec: str) -> Jitter:
        """`SOURCE:PCT:ISO_TIME`, e.g. `spheron:20:2026-07-19T00:00` (UTC unless offset)."""
        return cls(*_name_pct_time(spec, "jitter", "SOURCE"))


OFFER_CHURN_SUFFIX = "#churn"     # offer_id and sku suffix of the listings that come and go


@dataclass(frozen=True)
class OfferChurn:
    """Cheap listings that come and go all month: clones of a seeded `share` of the `sources`'
    offers (None: every source), `discount_pct` % cheaper than their original and following its
    price path, each listed for `days` days, then not for `days` days, on a phase of its own."""

    discount_pct: float = 20.0
    sources: tuple[str, ...] | None = None
    days: int = 3
    share: float = 0.5

    def __post_init__(self) -> None:
        if not 0 <= self.discount_pct < 100:
            raise SimulationError(f"offer churn: discount must be in [0, 100), "
                                  f"got {self.discount_pct}")
        if not 1 <= self.days <= 60:
            raise SimulationError(f"offer churn: days must be 1-60, got {self.days}")
        if not 0 < self.share <= 1:
            raise SimulationError(f"offer churn: share must be in (0, 1], got {self.share}")

    @classmethod
    def parse(cls, spec: str) -> OfferChurn:
        """`DISCOUNT_PCT[:SOURCES][:DAYS][:SHARE]`, e.g. `20`, `30:autodl_cn:2:0.25`."""
        parts = spec.split(":") + [""] * 3
        if len(parts) > 7 or not parts[0].strip():
            raise SimulationError(f"offer churn {spec!r}: expected "
                                  "DISCOUNT_PCT[:SOURCES][:DAYS][:SHARE]")
        try:
            return cls(float(parts[0]), split_names(parts[1]) or None,
                       int(parts[2]) if parts[2].strip() else 3,
                       float(parts[3]) if parts[3].strip() else 0.5)
        except ValueError as exc:
            raise SimulationError(f"offer churn {spec!r}: {exc}") from exc

    def applies_to(self, sources: np.ndarray) -> np.ndarray:
        return _members(self.sources, sources)


INDEX_EFFECTS = (Outage, Typo, OfferChurn, Spike, Jitter)   # what the index's truth injects

TIME_EFFECTS = (MonthEndDip, Trend, PriceDrop, MonthEndChurn, FxMove, *INDEX_EFFECTS)
Effect = (MonthEndDip | PriceDrop | Trend | MonthEndChurn | FxMove | Outage | Typo | OfferChurn
          | Spike | Jitter | RegionalGap | RegionCopy | SliceRatio | ServerRatio | SpotRatio
          | MonthlyRatio)

# The name each effect has in truth.scenario.effects (structural effects: their class name in
# snake case, as in truth.offer_effects: RegionalGap -> regional_gap, SliceRatio -> slice_ratio).
EFFECT_NAMES = {MonthEndDip: "dip", Trend: "trend", PriceDrop: "drop", MonthEndChurn: "churn",
                FxMove: "fx_move", Outage: "outage", Typo: "typo", OfferChurn: "offer_churn",
                Spike: "spike", Jitter: "jitter"}


def effect_name(effect) -> str:
    cls = type(effect)
    return EFFECT_NAMES.get(cls) or re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()


def effect_record(effect) -> dict:
    """{"effect": name, parameter: value, ...}, JSON-ready (times ISO, tuples as lists)."""
    record: dict = {"effect": effect_name(effect)}
    for f in dataclasses.fields(effect):
        value = getattr(effect, f.name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, tuple):
            value = list(value)
        record[f.name] = value
    return record


def _members(wanted: tuple[str, ...] | None, sources: np.ndarray) -> np.ndarray:
    if wanted is None:
        return np.ones(len(sources), dtype=bool)
    return np.isin(sources, list(wanted))


def split_names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())

