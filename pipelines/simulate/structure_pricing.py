"""The pricing engine of the structural effects (`structure.py`): which offer is priced from which
reference, and each offer's final price, references priced first.

An offer's price is set by one rule: a region copy (its copy leader's price) before anything; else
a regional gap (the same vendor's tier-1 offer), which wins over a ratio; else a ratio to a partner
(slice, server, spot, monthly: the first in that order that finds one); else it keeps its price.
Every rule reads its reference's FINAL price. Rules that do not set the price are still measured:
their truth rows carry the ratio the offers end up with. See structure.py for why.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from pipelines.simulate.common import SimulationError
from pipelines.simulate.randomness import offer_keys, uniform

# The city a clone in a province is listed in (else the region table's first city there).
REPRESENTATIVE_CITIES = {"Inner Mongolia": "乌兰察布", "Guizhou": "贵安", "Jiangsu": "南京"}
NULL = "\x00null"            # NULL pairs only with NULL (gpu_variant, region_code, sku)


# ------------------------------------------------------------------------------------------------
# Provinces and their representative city
# ------------------------------------------------------------------------------------------------

@lru_cache(maxsize=512)
def canonical_province(name: str) -> str:
    """"内蒙古" / "inner mongolia" -> "Inner Mongolia"; unknown names are returned stripped."""
    from spiders.parsing.regions import province_aliases
    wanted = name.strip().casefold()
    return next((canon for alias, canon in province_aliases().items()
                 if alias.casefold() == wanted), name.strip())


def province_region(province: str) -> dict | None:
    """Region fields of a clone in `province`: its representative city, else the region table's
    first city there, else the province itself; None when the table does not know it."""
    from spiders.parsing import regions
    if province in REPRESENTATIVE_CITIES:
        r = regions.resolve_region(REPRESENTATIVE_CITIES[province])
        return {"region_code": r.region_code, "country": r.country, "province_or_state":
                r.province_or_state, "city": r.city, "is_tier1_city": False}
    path = Path(regions.__file__).with_name("regions.csv")
    with path.open(encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if not r["vendor"] and r["country"] == "CN"
                and r["province_or_state"] == province]
    row = next((r for r in rows if r["city"] and r["city"] != province), rows[0] if rows else None)
    return None if row is None else {"region_code": row["region_code"], "country": "CN",
                                     "province_or_state": province, "city": row["city"] or None,
                                     "is_tier1_city": False}


# ------------------------------------------------------------------------------------------------
# Pricing: rules, references, final prices
# ------------------------------------------------------------------------------------------------

class Rule(NamedTuple):
    effect: str                # truth.offer_effects.effect
    target: int
    candidates: tuple[int, ...]  # the references: the cheapest (ratios) or their median (gaps)
    value: float               # the ratio (gap: 1 - pct_v/100)
    per_instance: bool         # compare instance prices (slices), else prices per GPU-hour
    sets_price: bool           # False: only measured (a copied offer's gap)
    detail: dict


def _text(values) -> np.ndarray:
    return np.array([NULL if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)
                     for v in values], dtype=object)


class Pricer:
    """Final price (CNY per GPU-hour) of every offer under the rules, references priced first."""

    def __init__(self, df: pd.DataFrame, copies: Sequence, ratios: Sequence, gaps: Sequence,
                 seed: int) -> None:
        """`ratios` in order of precedence; effects are read by their fields and `.effect`."""
        self.df, self.seed = df, seed
        self.cny = df["price_per_gpu_hour_cny"].astype(float).to_numpy()
        if not (self.cny > 0).all():
            raise SimulationError("structural effects: offers need positive prices per GPU-hour")
        count = df["gpu_count"].astype(float).to_numpy()
        fraction = df["gpu_fraction"].astype(float).to_numpy()
        self.units = count * fraction
        self.col = {c: _text(df[c]) for c in ("source", "vendor", "region_code", "gpu_model",
                                              "gpu_variant", "offer_kind", "billing_period", "sku")}
        self.col["count"], self.col["fraction"] = count, fraction
        self.line = _text(df["gpu_model"] + "|" + _text(df["gpu_variant"]) + "|" + df["gpu_count"]
                          .astype(str) + "|" + df["gpu_fraction"].astype(float).astype(str) + "|"
                          + df["vram_gb"].astype(float).astype(str) + "|" + df["offer_kind"]
                          + "|" + df["billing_period"])
        self.leader: dict[int, int] = {}
        self.rules: list[Rule] = []
        self.primary: dict[int, Rule] = {}
        self.notes: list[str] = []
        for copy in copies:
            self._copy(copy)
        for effect in ratios:
            self._ratio(effect)
        for gap in gaps:
            self._gap(gap)
        self.memo: dict[int, float] = {}
        self.visiting: set[int] = set()

    def _key(self, i: int, *names: str) -> tuple:
        return tuple(self.col[n][i] for n in names)

    def _add(self, rule: Rule) -> None:
        self.rules.append(rule)
        if rule.sets_price and rule.target not in self.leader:
            if rule.effect == "regional_gap":
                self.primary[rule.target] = rule          # gaps come last: they win
            else:
                self.primary.setdefault(rule.target, rule)

    def _copy(self, copy) -> None:
        names = set(copy.vendors_or_sources)
        members = np.flatnonzero(np.isin(self.col["source"], list(names))
                                 | np.isin(self.col["vendor"], list(names)))
        groups: dict[tuple, list[int]] = defaultdict(list)
        for i in members:
            groups[(self.col["vendor"][i], self.line[i])].append(int(i))
        ids = self.df["offer_id"].to_numpy()
        for group in groups.values():
            first = min(group, key=lambda i: ids[i])
            for i in group:
                if i != first and i not in self.leader:
                    self.leader[i] = self.leader.get(first, first)

    def _ratio(self, effect) -> None:
        c, n = self.col, len(self.cny)
        mine = np.ones(n, bool) if effect.sources is None else np.isin(c["source"],
                                                                       list(effect.sources))
        whole_single = (c["count"] == 1) & (c["fraction"] == 1)
        place = ("source", "vendor", "region_code", "gpu_model", "gpu_variant")
        if effect.effect == "slice_ratio":
            targets, partners = mine & (c["fraction"] < 1), whole_single
            keys = [(*place, "offer_kind", "billing_period")]
        elif effect.effect == "server_ratio":
            targets, partners = mine & (c["count"] > 1) & (c["fraction"] == 1), whole_single
            keys = [(*place, "offer_kind", "billing_period")]
        elif effect.effect == "spot_ratio":
            targets, partners = mine & (c["offer_kind"] == "spot"), c["offer_kind"] == "on_demand"
            keys = [("source", "vendor", "region_code", "sku", "billing_period"),
                    (*place, "count", "fraction", "billing_period")]
        else:
            targets, partners = mine & (c["billing_period"] == "month"), \
                c["billing_period"] == "hour"
            keys = [(*place, "count", "fraction", "offer_kind", "sku"),
                    (*place, "count", "fraction", "offer_kind")]
        index = [defaultdict(list) for _ in keys]
        for j in np.flatnonzero(partners):
            for k, names in enumerate(keys):
                index[k][self._key(j, *names)].append(int(j))
        alone = []
        for i in np.flatnonzero(targets):
            found = next((tuple(x[self._key(i, *names)])
                          for x, names in zip(index, keys, strict=True)
                          if x.get(self._key(i, *names))), ())
            if not found:
                alone.append(int(i))
                continue
            self._add(Rule(effect.effect, int(i), found, effect.ratio,
                            effect.effect == "slice_ratio", True,
                            {"requested_ratio": effect.ratio}))
        if alone:
            self.notes.append(f"{effect.effect} {effect.ratio:g}: {len(alone)} offer(s) without a "
                              f"partner keep their price ({self._examples(alone)})")

    def vendor_pct(self, gap, vendor: str) -> float:
        key = offer_keys([f"regional_gap|{canonical_province(gap.province)}|{vendor}"], self.seed)
        return gap.pct + gap.spread * (2 * float(uniform(key, 0)[0]) - 1)

    def gap_sides(self, gap) -> tuple[dict, dict]:
        """((vendor, line) -> tier-1 offers, (vendor, line) -> province offers)."""
        province = canonical_province(gap.province)
        cn = (self.df["country"] == "CN").to_numpy()
        here = cn & np.array([canonical_province(str(p)) == province if isinstance(p, str)
                              else False for p in self.df["province_or_state"]])
        tier1 = cn & self.df["is_tier1_city"].astype(bool).to_numpy()
        sides: tuple[dict, dict] = (defaultdict(list), defaultdict(list))
        for side, mask in zip(sides, (tier1, here), strict=True):
            for i in np.flatnonzero(mask):
                side[(self.col["vendor"][i], self.line[i])].append(int(i))
        return sides

    def _gap(self, gap) -> None:
        tier1, here = self.gap_sides(gap)
        tier1_vendors = {v for v, _ in tier1}
        leaders = set(self.leader.values())
        unpaired = []
        for (vendor, line), offers in sorted(here.items()):
            if (vendor, line) not in tier1:
                unpaired += offers if vendor in tier1_vendors else []
                continue
            pct = self.vendor_pct(gap, vendor)
            for i in offers:
                copied = i in self.leader or i in leaders
                self._add(Rule("regional_gap", i, tuple(tier1[(vendor, line)]), 1 - pct / 100,
                                False, not copied, {
                                    "requested_pct": pct, "pct": gap.pct, "spread": gap.spread,
                                    "province": canonical_province(gap.province),
                                    "tier1_offers": len(tier1[(vendor, line)]),
                                    "region_copy": copied}))
        if unpaired:
            self.notes.append(f"regional gap {gap.province}: {len(unpaired)} offer(s) of tier-1 "
                              f"vendors have no tier-1 offer of their line and keep their price "
                              f"({self._examples(unpaired)})")

    def _examples(self, offers: list[int]) -> str:
        shown = [" ".join(str(self.df[c].iat[i]) for c in ("source", "region_code", "gpu_model",
                                                           "gpu_count", "gpu_fraction",
                                                           "offer_kind", "billing_period"))
                 for i in offers[:3]]
        return "; ".join(shown) + (" ..." if len(offers) > 3 else "")

    def measured(self, i: int, per_instance: bool, prices=None) -> float:
        price = self.final(i) if prices is None else prices[i]
        return price * self.units[i] if per_instance else price

    def reference(self, rule: Rule) -> int:
        ids = self.df["offer_id"].to_numpy()
        return min(rule.candidates, key=lambda j: (self.measured(j, rule.per_instance), ids[j]))

    def reference_price(self, rule: Rule, prices=None) -> float:
        """The price a rule is set against: for a regional gap the median of the vendor's tier-1
        offers of the line (as marts.regional_discount reads a vendor's reference price), for a
        ratio the cheapest partner (as the ratio marts pair)."""
        if rule.effect == "regional_gap":
            return float(np.median([self.measured(j, rule.per_instance, prices)
                                    for j in rule.candidates]))
        return self.measured(self.reference(rule), rule.per_instance, prices)

    def final(self, i: int) -> float:
        if i in self.memo:
            return self.memo[i]
        if i in self.visiting:
            raise SimulationError(f"structural effects: offer {self.df['offer_id'].iat[i]} is "
                                  "priced from itself (circular references)")
        self.visiting.add(i)
        if i in self.leader:
            price = self.final(self.leader[i])
        elif i in self.primary:
            rule = self.primary[i]
            ref = self.reference_price(rule)
            price = rule.value * ref / (self.units[i] if rule.per_instance else 1.0)
        else:
            price = self.cny[i]
        self.visiting.discard(i)
        self.memo[i] = price
        return price

    def set_by(self, i: int) -> str | None:
        if i in self.leader:
            return "region_copy"
        return self.primary[i].effect if i in self.primary else None
