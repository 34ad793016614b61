"""Structural effects: they change the offers once, before any hour is simulated, and record the
truth of what they did (rows of truth.offer_effects).

* RegionCopy: a vendor copies one price into every region (same price, same noise path).
* SliceRatio, ServerRatio, SpotRatio, MonthlyRatio: within one vendor and region, a slice's
  instance price is ratio x the whole card's; a server's, a spot offer's and a monthly offer's
  price per GPU-hour is ratio x the single card's, the on-demand offer's, the hourly offer's.
* RegionalGap: each vendor's province offer = (1 - pct_v/100) x its own tier-1 offer of the line.

Order: copies, then ratios, then gaps, as if applied one after the other (a later one wins where
two touch one offer), except that every rule reads its reference's FINAL price (references are
priced first, recursively):
1. Copies first: a vendor that copies one price into every region has no regional structure, so
   a copied offer always takes its copy leader's price. A ratio reprices the leader (and so every
   copy); a gap reprices no copied offer (its truth row measures the copy: 0 % when the tier-1
   offer is a copy too).
2. Ratios relate offers of one vendor in ONE region (slice to whole card, server to single card,
   spot to on-demand, monthly to hourly).
3. Gaps last: a province offer whose vendor lists the line in a tier-1 city is (1 - pct_v/100) x
   that tier-1 offer's final price. In the usual case this keeps the ratios too (the tier-1 slice
   is ratio x the tier-1 whole card, so both province prices are scaled alike), and a province
   offer without a tier-1 line follows its gapped partner, because ratios read final prices.
Every truth row is computed from the final (rounded) prices, so at noise 0 it is exactly what the
offers end up with; where two rules disagree (say a tier-1 server without a single card in its
city, while its province clone has one), the row keeps the actual value, the requested one is in
`detail`, `detail.set_by` names the rule that set the price, and a note says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import ClassVar, NamedTuple

import numpy as np
import pandas as pd

from pipelines.simulate.common import TIER1_PROVINCES, SimulationError
from pipelines.simulate.structure_pricing import Pricer, canonical_province, province_region

TRUTH_COLUMNS = ("effect", "offer_id", "source", "vendor", "reference_offer_id", "size_pct",
                 "ratio", "starts_at", "ends_at", "time_zone", "detail")
PRICE_COLUMNS = ("price_amount", "price_per_gpu_hour_cny", "price_per_gpu_hour_usd")
RATIO_TOLERANCE = 1e-5       # relative: a truth row further from the value asked gets a note
                             # (6-decimal prices alone stay within it above 0.1 CNY/GPU-hour)


def split_names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())


@dataclass(frozen=True)
class RegionalGap:
    """For every vendor with offers in Chinese tier-1 cities, each of its tier-1 offer lines (card
    model and variant, GPU count, fraction, VRAM, offer kind, billing period) is priced in
    `province` at (1 - pct_v/100) x the tier-1 offer (the cheapest per GPU-hour when several),
    pct_v drawn per vendor, uniformly in [pct - spread, pct + spread] (seeded). The vendor's
    existing province offers of the line are repriced; with `clone`, a line it does not list there
    gets a clone in the province's representative city. Other vendors keep their prices."""

    province: str
    pct: float
    spread: float = 0.0
    clone: bool = True

    def __post_init__(self) -> None:
        if not 0 <= self.spread < 100:
            raise SimulationError(f"regional gap: spread must be in [0, 100), got {self.spread}")
        if not (self.pct - self.spread > -100 and self.pct + self.spread < 100):
            raise SimulationError("regional gap: pct +/- spread must stay between -100 and 100, "
                                  f"got {self.pct} +/- {self.spread}")
        if canonical_province(self.province) in TIER1_PROVINCES:
            raise SimulationError(f"regional gap: {self.province} holds a tier-1 city (the "
                                  "reference itself); pick another province")

    @classmethod
    def parse(cls, spec: str) -> RegionalGap:
        """`PROVINCE:PCT[:SPREAD][:no-clone]`, e.g. `Inner Mongolia:25`, `Guizhou:20:5`."""
        parts = [p.strip() for p in spec.split(":")]
        clone = parts[-1].lower() != "no-clone"
        parts = parts if clone else parts[:-1]
        if not 2 <= len(parts) <= 3 or not parts[0]:
            raise SimulationError(f"regional gap {spec!r}: expected PROVINCE:PCT[:SPREAD]"
                                  "[:no-clone]")
        try:
            return cls(parts[0], float(parts[1]), float(parts[2]) if len(parts) > 2 else 0.0,
                       clone)
        except ValueError as exc:
            raise SimulationError(f"regional gap {spec!r}: {exc}") from exc

    def describe(self) -> str:
        spread = f" +/- {self.spread:g}" if self.spread else ""
        return (f"regional gap: {self.province} {self.pct:g}{spread} % below the same vendor's "
                f"tier-1 offer{'' if self.clone else ' (no clones)'}")


@dataclass(frozen=True)
class RegionCopy:
    """The vendors (named by vendor or by source) copy one price into every region: each offer of
    one vendor and offer line gets the price and the noise path of the line's first offer (by
    offer_id), so the copies move together."""

    vendors_or_sources: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.vendors_or_sources:
            raise SimulationError("region copy: name at least one vendor or source")

    @classmethod
    def parse(cls, spec: str) -> RegionCopy:
        """`VENDORS_OR_SOURCES`, comma-separated, e.g. `autodl_cn,gpugeek_cn`."""
        try:
            return cls(split_names(spec))
        except SimulationError as exc:
            raise SimulationError(f"region copy {spec!r}: {exc}") from exc

    def describe(self) -> str:
        return f"region copy: {', '.join(self.vendors_or_sources)} list one price everywhere"


@dataclass(frozen=True)
class _PairRatio:
    """price(offer) = ratio x price(its partner), for the offers of `sources` (None: all)."""

    ratio: float
    sources: tuple[str, ...] | None = None
    effect: ClassVar[str] = ""
    flag: ClassVar[str] = ""
    measure: ClassVar[str] = "per GPU-hour"

    def __post_init__(self) -> None:
        if not 0 < self.ratio <= 100:
            raise SimulationError(f"{self.flag}: ratio must be in (0, 100], got {self.ratio}")

    @classmethod
    def parse(cls, spec: str):
        """`RATIO[:SOURCES]`, e.g. `0.4` or `0.4:autodl_cn,idc_nanjing`."""
        ratio, _, sources = spec.partition(":")
        try:
            return cls(float(ratio), split_names(sources) or None)
        except ValueError as exc:
            raise SimulationError(f"{cls.flag} {spec!r}: expected RATIO[:SOURCES] ({exc})") from exc

    def describe(self) -> str:
        who = ", ".join(self.sources) if self.sources else "every source"
        return f"{self.effect.replace('_', ' ')}: {self.ratio:g} {self.measure} ({who})"


@dataclass(frozen=True)
class SliceRatio(_PairRatio):
    """Each slice (fraction < 1): instance price per hour = ratio x the cheapest whole single card's
    of the same source, vendor, region, model, variant, offer kind and billing period."""
    effect: ClassVar[str] = "slice_ratio"
    flag: ClassVar[str] = "--slice-ratio"
    measure: ClassVar[str] = "x the whole card's instance price"


@dataclass(frozen=True)
class ServerRatio(_PairRatio):
    """Each multi-GPU server: per GPU-hour = ratio x the cheapest single whole card's (same source,
    vendor, region, model, variant, offer kind, billing period)."""
    effect: ClassVar[str] = "server_ratio"
    flag: ClassVar[str] = "--server-ratio"


@dataclass(frozen=True)
class SpotRatio(_PairRatio):
    """Each spot offer: per GPU-hour = ratio x the on-demand offer of the same source, vendor,
    region and sku, else the cheapest of the same line (model, variant, count, fraction, period)."""
    effect: ClassVar[str] = "spot_ratio"
    flag: ClassVar[str] = "--spot-ratio"


@dataclass(frozen=True)
class MonthlyRatio(_PairRatio):
    """Each monthly offer: per GPU-hour = ratio x the hourly offer of the same source, vendor,
    region, model, variant, count, fraction and offer kind (the same sku if one shares it, else the
    cheapest)."""
    effect: ClassVar[str] = "monthly_ratio"
    flag: ClassVar[str] = "--monthly-ratio"


RATIO_EFFECTS = (SliceRatio, ServerRatio, SpotRatio, MonthlyRatio)   # also their precedence
STRUCTURAL_EFFECTS = (RegionalGap, RegionCopy, SliceRatio, ServerRatio, SpotRatio, MonthlyRatio)


class CliFlag(NamedTuple):
    flag: str
    effect: type
    metavar: str
    help: str


CLI_FLAGS = (
    CliFlag("--regional-gap", RegionalGap, "PROVINCE:PCT[:SPREAD][:no-clone]",
            'each vendor\'s offers in PROVINCE cost PCT % (+/- SPREAD, drawn per vendor) less than '
            'its own tier-1 offer of the line; clones fill missing lines. E.g. "Guizhou:20:5"'),
    CliFlag("--region-copy", RegionCopy, "VENDORS_OR_SOURCES",
            "these vendors copy one price (and its noise) into every region. E.g. autodl_cn"),
    CliFlag("--slice-ratio", SliceRatio, "RATIO[:SOURCES]",
            "slice instance price = RATIO x the whole card's. E.g. 0.4"),
    CliFlag("--server-ratio", ServerRatio, "RATIO[:SOURCES]",
            "multi-GPU server per GPU-hour = RATIO x the single card's. E.g. 0.9"),
    CliFlag("--spot-ratio", SpotRatio, "RATIO[:SOURCES]",
            "spot per GPU-hour = RATIO x on-demand (same sku, else line). E.g. 0.5"),
    CliFlag("--monthly-ratio", MonthlyRatio, "RATIO[:SOURCES]",
            "monthly per GPU-hour = RATIO x hourly. E.g. 0.8"),
)




# ------------------------------------------------------------------------------------------------
# Applying them
# ------------------------------------------------------------------------------------------------

def apply_structure(offers: pd.DataFrame, effects: Sequence, seed: int
                    ) -> tuple[pd.DataFrame, list[dict], list[str]]:
    """offers (OFFER_COLUMNS, one row per offer_id) -> (offers with prices changed and clones
    added, truth rows as dicts with the truth.offer_effects columns, notes on what could not be
    applied). Non-structural effects are ignored. A changed offer has price_amount and both prices
    per GPU-hour scaled by one factor (rounded to 6 decimals); `noise_key` (added, default the
    offer_id) is shared by region copies, so they follow one noise path."""
    df = offers.reset_index(drop=True).copy()
    if "noise_key" not in df:
        df["noise_key"] = df["offer_id"]
    df["noise_key"] = df["noise_key"].where(df["noise_key"].notna(), df["offer_id"])
    structural = [e for e in effects if isinstance(e, STRUCTURAL_EFFECTS)]
    if not structural:
        return df, [], []
    copies = [e for e in structural if isinstance(e, RegionCopy)]
    ratios = sorted((e for e in structural if isinstance(e, _PairRatio)),
                    key=lambda e: RATIO_EFFECTS.index(type(e)))
    gaps = [e for e in structural if isinstance(e, RegionalGap)]
    _check(df, copies, ratios, gaps)
    clone_notes: list[str] = []
    clone_of: dict[str, str] = {}
    if gaps:
        before = Pricer(df, copies, ratios, (), seed)     # tier-1 prices do not depend on gaps
        clones = [row for gap in gaps for row in _gap_clones(df, gap, before, clone_of,
                                                              clone_notes)]
        if clones:
            df = pd.concat([df, pd.DataFrame(clones, columns=df.columns)], ignore_index=True)
    pricer = Pricer(df, copies, ratios, gaps, seed)
    notes = pricer.notes + clone_notes
    final = np.array([pricer.final(i) for i in range(len(df))])
    df = _reprice(df, final / pricer.cny)
    for i in pricer.leader:
        df.at[i, "noise_key"] = df.at[_root(pricer, i), "offer_id"]
    return df, _truth(df, pricer, clone_of, notes), notes


def _check(df: pd.DataFrame, copies: list, ratios: list, gaps: list) -> None:
    sources, vendors = set(df["source"]), set(df["vendor"])
    for copy in copies:
        unknown = sorted(set(copy.vendors_or_sources) - sources - vendors)
        if unknown:
            raise SimulationError(f"region copy: no offers of vendor or source "
                                  f"{', '.join(unknown)}; sources: {', '.join(sorted(sources))}")
    for k, effect in enumerate(ratios):
        unknown = sorted(set(effect.sources or ()) - sources)
        if unknown:
            raise SimulationError(f"{effect.flag}: no offers of source(s) {', '.join(unknown)}; "
                                  f"sources: {', '.join(sorted(sources))}")
        for other in ratios[:k]:
            if type(other) is type(effect) and (other.sources is None or effect.sources is None
                                                or set(other.sources) & set(effect.sources)):
                raise SimulationError(f"{effect.flag} given twice for the same source(s)")
    provinces = [canonical_province(g.province) for g in gaps]
    cn = df[df["country"] == "CN"]
    known = sorted({canonical_province(p) for p in cn["province_or_state"].dropna()})
    for gap, province in zip(gaps, provinces, strict=True):
        if provinces.count(province) > 1:
            raise SimulationError(f"regional gap: {province} given twice")
        if province in known:
            continue
        why = "" if gap.clone else " (and clones are off)"
        if gap.clone and province_region(province) is None:
            why = " and the region table has no such Chinese province"
        if why:
            raise SimulationError(f"regional gap: no offers in {gap.province!r}{why}; Chinese "
                                  f"provinces in the offers: {', '.join(known) or 'none'}")


def _gap_clones(df: pd.DataFrame, gap: RegionalGap, pricer: Pricer, clone_of: dict[str, str],
                notes: list[str]) -> list[dict]:
    """Clones in the province of each tier-1 line (vendor and offer line) the vendor does not list
    there: the cheapest tier-1 offer of the line, with the province's region fields."""
    province = canonical_province(gap.province)
    tier1, here = pricer.gap_sides(gap)
    if not tier1:
        notes.append(f"regional gap {province}: no offers in Chinese tier-1 cities to compare with")
        return []
    copied = set(pricer.leader) | set(pricer.leader.values())
    missing = sorted(key for key, offers in tier1.items()
                     if key not in here and not copied.intersection(offers))
    if missing and not gap.clone:
        notes.append(f"regional gap {province}: {len(missing)} tier-1 line(s) have no offer "
                     f"there (clones are off)")
    if not missing or not gap.clone:
        return []
    region = province_region(province)
    ids = df["offer_id"].to_numpy()
    taken = set(ids) | set(clone_of)
    slug = "gap-" + "-".join(province.lower().split())
    rows = []
    for key in missing:
        ref = min(tier1[key], key=lambda j: (pricer.final(j), ids[j]))
        row = df.iloc[ref].to_dict()
        row.update(region)
        offer_id, n = f"{ids[ref]}#{slug}", 2
        while offer_id in taken:
            offer_id, n = f"{ids[ref]}#{slug}-{n}", n + 1
        taken.add(offer_id)
        # the clone keeps its SKU: the same instance type listed in another region, so the
        # regional pair is one configuration (int_regional_pairs) even where no machine is stated
        row.update(offer_id=offer_id, noise_key=offer_id)
        clone_of[offer_id] = ids[ref]
        rows.append(row)
    return rows


def _scaled(value, factor: float):
    if value is None or pd.isna(value):
        return value
    scaled = round(float(value) * factor, 6)
    return Decimal(str(scaled)) if isinstance(value, Decimal) else scaled


def _reprice(df: pd.DataFrame, factor: np.ndarray) -> pd.DataFrame:
    """Scale the listed price and both prices per GPU-hour of the offers whose factor is not 1:
    the plan's unit inference (listed per card or per server) stays right."""
    changed = np.flatnonzero(factor != 1.0)
    for column in PRICE_COLUMNS:
        values = df[column].tolist()
        for i in changed:
            values[i] = _scaled(values[i], factor[i])
        df[column] = pd.Series(values, index=df.index, dtype=df[column].dtype)
    return df


def _root(pricer: Pricer, i: int) -> int:
    while i in pricer.leader:
        i = pricer.leader[i]
    return i


def _truth(df: pd.DataFrame, pricer: Pricer, clone_of: dict[str, str],
           notes: list[str]) -> list[dict]:
    """One row per effect and offer, measured on the final (rounded) prices per GPU-hour."""
    prices = df["price_per_gpu_hour_cny"].astype(float).to_numpy()
    ids = df["offer_id"].to_numpy()

    def row(effect: str, i: int, reference: int, ratio: float, **columns) -> dict:
        out = dict.fromkeys(TRUTH_COLUMNS)
        out.update(effect=effect, offer_id=ids[i], source=df["source"].iat[i],
                   vendor=df["vendor"].iat[i], reference_offer_id=ids[reference],
                   ratio=float(ratio), **columns)
        return out

    rows = []
    for i in sorted(pricer.leader, key=lambda i: ids[i]):
        root = _root(pricer, i)
        rows.append(row("region_copy", i, root, prices[i] / prices[root],
                        detail={"noise_key": ids[root]}))
    off: dict[str, int] = {}
    for rule in pricer.rules:
        ref = pricer.reference(rule)
        ratio = (pricer.measured(rule.target, rule.per_instance, prices)
                 / pricer.reference_price(rule, prices))
        if abs(ratio / rule.value - 1) > RATIO_TOLERANCE:
            off[rule.effect] = off.get(rule.effect, 0) + 1
        detail = {**rule.detail, "set_by": pricer.set_by(rule.target)}
        if ids[rule.target] in clone_of:
            detail["clone_of"] = clone_of[ids[rule.target]]
        size = 100 * (1 - ratio) if rule.effect == "regional_gap" else None
        rows.append(row(rule.effect, rule.target, ref, ratio, size_pct=size, detail=detail))
    for effect, n in off.items():
        notes.append(f"{effect}: {n} offer(s) end up off the value asked for (another effect sets "
                     f"their price, see detail.set_by); their truth rows keep the actual value")
    return rows
