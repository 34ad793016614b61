"""The scenario grid of `make truth`: which effects each simulated history carries.

One history per (seed, noise) carries every kind of effect at once, each on its own sources: the
sources are dealt round-robin to roles (dips of 2, 3, 5 and 8 %, nothing, a steady decline, a
steady rise, listings vanishing at month end, listings appearing at month end), the deal rotating
with the seed, so across seeds each source plays several roles. On top, in every history:
exchange-rate swings around each month end (the USD is worth 5 % less CNY from the 27th to the
2nd: a dip in CNY that is not a price move), regional gaps priced against the same vendor's tier-1
offers (vendor by vendor within a spread, so a province mixes vendor kinds at their own levels),
and one vendor that copies one price into every region. A last history at noise 0 carries the
structural ratios (slice, server, spot, monthly), whose marts must then be exact.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from pipelines.simulate import (
    FxMove,
    MonthEndChurn,
    MonthEndDip,
    MonthlyRatio,
    RegionalGap,
    RegionCopy,
    ServerRatio,
    SliceRatio,
    SpotRatio,
    Trend,
)

ROLES = ("dip:2", "dip:3", "dip:5", "dip:8", "none", "none", "trend:-9", "trend:6",
         "churn:vanish", "churn:appear")
DIP_SIZES = (2.0, 3.0, 5.0, 8.0)
GAPS = (("Inner Mongolia", 25.0), ("Guizhou", 20.0), ("Jiangsu", 15.0))
GAP_SPREAD = 5.0
FX_SWING_PCT = 5.0
COPYING_SOURCE = "tencent_cn"            # copies one price into every region (when simulated)
STRUCTURAL_RATIOS = {"slice": 0.4, "server": 0.8, "spot": 0.3, "monthly": 0.7}
# A history of N complete months runs on into the first days of month N+1, which complete month N
# (its next start: intermediate.int_month_windows.next_start_last_day; tests/truth checks it).
NEXT_START_DAYS = 7


@dataclass(frozen=True)
class Scenario:
    name: str
    seed: int
    noise_pct: float
    start: date
    days: int
    every_hours: int
    effects: tuple = ()
    roles: dict[str, str] = field(default_factory=dict)   # source -> role (dip histories)
    length: int | None = None    # complete months of history (dip histories)


def deal_roles(sources: list[str], seed: int) -> dict[str, str]:
    """Each source's role in the history of `seed`: round-robin over ROLES, rotated by the seed."""
    return {source: ROLES[(i + 3 * seed) % len(ROLES)] for i, source in enumerate(sorted(sources))}


def _month_starts(start: date, days: int) -> list[date]:
    firsts, day = [], date(start.year, start.month, 1)
    while (day - start).days < days:
        firsts.append(day)
        day = date(day.year + day.month // 12, day.month % 12 + 1, 1)
    return firsts


def fx_swings(start: date, days: int) -> list[FxMove]:
    """The USD loses FX_SWING_PCT % against the CNY at 00:00 UTC on the 27th of every month and
    gets it back at 00:00 UTC on the 2nd of the next: in CNY, every USD-listed offer dips at month
    end."""
    moves = []
    back = 100 * (1 / (1 - FX_SWING_PCT / 100) - 1)
    for first in _month_starts(start, days):
        last_day = calendar.monthrange(first.year, first.month)[1]
        down = datetime(first.year, first.month, min(27, last_day), tzinfo=UTC)
        nxt = date(first.year + first.month // 12, first.month % 12 + 1, 2)
        moves.append(FxMove("USD", -FX_SWING_PCT, down))
        moves.append(FxMove("USD", back, datetime(nxt.year, nxt.month, nxt.day, tzinfo=UTC)))
    return moves


def role_effects(roles: dict[str, str]) -> list:
    by_role: dict[str, list[str]] = {}
    for source, role in roles.items():
        by_role.setdefault(role, []).append(source)
    effects: list = []
    for role, sources in sorted(by_role.items()):
        kind, _, arg = role.partition(":")
        names = tuple(sorted(sources))
        if kind == "dip":
            effects.append(MonthEndDip(float(arg), names, days=5))
        elif kind == "trend":
            effects.append(Trend(float(arg), names))
        elif kind == "churn":
            effects.append(MonthEndChurn(arg, names, days=5, share=0.5))
    return effects


def structural_effects(sources: list[str]) -> list:
    effects: list = [RegionalGap(province, pct, GAP_SPREAD) for province, pct in GAPS]
    if COPYING_SOURCE in sources:
        effects.insert(0, RegionCopy((COPYING_SOURCE,)))
    return effects


def dip_scenarios(sources: list[str], *, seeds: tuple[int, ...], noises: tuple[float, ...],
                  start: date, days: int, every_hours: int,
                  length: int | None = None) -> list[Scenario]:
    out = []
    prefix = f"m{length}-" if length is not None else ""
    for noise in noises:
        for seed in seeds:
            roles = deal_roles(sources, seed)
            effects = (*structural_effects(sources), *role_effects(roles), *fx_swings(start, days))
            out.append(Scenario(f"{prefix}noise{noise:g}-seed{seed}", seed, noise, start, days,
                                every_hours, tuple(effects), roles, length))
    return out


def ratio_scenario(sources: list[str], *, start: date, days: int, every_hours: int) -> Scenario:
    effects = (*structural_effects(sources),
               SliceRatio(STRUCTURAL_RATIOS["slice"]), ServerRatio(STRUCTURAL_RATIOS["server"]),
               SpotRatio(STRUCTURAL_RATIOS["spot"]), MonthlyRatio(STRUCTURAL_RATIOS["monthly"]))
    return Scenario("ratios-noise0", 0, 0.0, start, days, every_hours, tuple(effects))
