"""The effects the price index's truth injects (effects.py: Outage, Typo, OfferChurn, Spike,
Jitter), planned: the clones that come and go, the hours a source is dark, the hours an offer is
mistyped, the hours a source's prices spike, a source's daily moves; and applying them to a
block of hours (rows.py calls `apply_index_effects`). Outages, typos and churning clones move no
market; a spike and a jitter do (tests/workshop/truth/index_truth.py's true path counts them)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import pandas as pd

from pipelines.simulate.common import SimulationError
from pipelines.simulate.effects import OFFER_CHURN_SUFFIX, Jitter, OfferChurn, Outage, Spike, Typo
from pipelines.simulate.randomness import U64, uniform

S_OFFER_CHURN = 0x6F63_6875_726E       # the seeds' streams: which offers, their phase
S_CHURN_PHASE = 0x6370_6861_7365


@dataclass
class IndexPlan:
    """(start s, end s, offers) a source is dark; (factor, start s, end s, offer) mistyped;
    (days, offers, phase days) the churning clones' listing cycle."""
    outages: list[tuple[int, int, np.ndarray]] = field(default_factory=list)
    typos: list[tuple[float, int, int, int]] = field(default_factory=list)
    cycles: list[tuple[int, np.ndarray, np.ndarray]] = field(default_factory=list)
    spikes: list[tuple[float, int, int, np.ndarray]] = field(default_factory=list)
    jitters: list[tuple[Jitter, int, np.ndarray]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.outages or self.typos or self.cycles or self.spikes or self.jitters)


def jitter_log(jitter: Jitter, utc_day: int) -> float:
    """The log factor of `jitter`'s source on UTC day number `utc_day` (days since 1970)."""
    digest = hashlib.sha256(f"{jitter.source}|{utc_day}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2 ** 64
    return (2 * u - 1) * math.log(1 + jitter.pct / 100)


def churn_clones(df: pd.DataFrame, effects: Sequence, keys: np.ndarray
                 ) -> tuple[pd.DataFrame, list[tuple[OfferChurn, np.ndarray, np.ndarray]]]:
    """Each OfferChurn's clones appended to the offers (`discount_pct` cheaper, in stock, their
    original's noise path); per effect the (N,) clones and their (N,) phase in days."""
    originals, sources = len(df), df["source"].to_numpy()
    added = []
    for k, churn in enumerate(e for e in effects if isinstance(e, OfferChurn)):
        picked = churn.applies_to(sources) & (uniform(keys ^ U64(S_OFFER_CHURN), k) < churn.share)
        clone = df[picked].copy()
        suffix = OFFER_CHURN_SUFFIX if k == 0 else f"{OFFER_CHURN_SUFFIX}-{k + 1}"
        clone["clone_of"] = clone["offer_id"]
        clone["offer_id"] = clone["offer_id"] + suffix
        clone["sku"] = clone["sku"] + suffix
        clone["available"] = True
        scale = 1 - churn.discount_pct / 100
        for column in ("price_amount", "price_per_gpu_hour_cny", "price_per_gpu_hour_usd"):
            clone[column] = clone[column].map(
                lambda v, s=scale: Decimal(str(round(float(v) * s, 6))))
        phase = np.floor(uniform(keys[picked] ^ U64(S_CHURN_PHASE), k) * 2 * churn.days)
        added.append((churn, clone, phase))
    if not added:
        return df, []
    grown = pd.concat([df, *(c for _, c, _ in added)], ignore_index=True)
    out, start = [], originals
    for churn, clone, phase in added:
        members = np.zeros(len(grown), dtype=bool)
        members[start:start + len(clone)] = True
        phases = np.zeros(len(grown))
        phases[start:start + len(clone)] = phase
        start += len(clone)
        out.append((churn, members, phases))
    return grown, out


def typo_offer(df: pd.DataFrame, source: str) -> int:
    """The row of the offer a Typo of `source` mistypes: the source's first by offer_id."""
    return int(df["offer_id"].where(df["source"] == source).dropna().sort_values().index[0])


def plan_index_effects(df: pd.DataFrame, effects: Sequence, known: list[str],
                       cycles: list[tuple[OfferChurn, np.ndarray, np.ndarray]]) -> IndexPlan:
    plan = IndexPlan(cycles=[(c.days, members, phase) for c, members, phase in cycles])
    sources = df["source"].to_numpy()
    for effect in effects:
        if isinstance(effect, (Outage, Typo, Spike, Jitter)) and effect.source not in known:
            raise SimulationError(f"{type(effect).__name__.lower()}: unknown source "
                                  f"{effect.source!r} (sources: {', '.join(known)})")
        if isinstance(effect, Outage):
            start = int(effect.at.timestamp())
            plan.outages.append((start, start + int(effect.days * 86400), sources == effect.source))
        elif isinstance(effect, Spike):
            start = int(effect.at.timestamp())
            back = start + effect.hours * 3600
            members = sources == effect.source
            plan.spikes.append((1 + effect.pct / 100, start, back, members))
            plan.outages.append((back + 3600, back + 3600 + effect.dark_hours * 3600, members))
        elif isinstance(effect, Jitter):
            plan.jitters.append((effect, int(effect.since.timestamp()),
                                 sources == effect.source))
        elif isinstance(effect, Typo):
            start = int(effect.at.timestamp())
            plan.typos.append((effect.factor, start, start + effect.hours * 3600,
                               typo_offer(df, effect.source)))
    return plan


def apply_index_effects(plan: IndexPlan, hours: np.ndarray, observed_s: np.ndarray,
                        factor: np.ndarray, listed: np.ndarray | None
                        ) -> tuple[np.ndarray, np.ndarray | None]:
    """The block's (T, N) price factor with the typos, and which offers are listed (None: all)
    with the outages and the churning clones' cycles."""
    if plan.empty:
        return factor, listed
    shown = np.ones(factor.shape, dtype=bool) if listed is None else listed.copy()
    for start, end, members in plan.outages:
        dark = (observed_s >= start) & (observed_s < end)
        shown &= ~(dark & members[None, :])
    for days, members, phase in plan.cycles:
        day = (hours[:, None] // 24) + phase[None, :]
        on = ((day // days) % 2) == 0
        shown &= np.where(members[None, :], on, True)
    if plan.spikes or plan.jitters:
        factor = factor.copy()
    for spike_factor, start, end, members in plan.spikes:
        during = (observed_s >= start) & (observed_s < end) & members[None, :]
        factor[during] *= spike_factor
    for jitter, since, members in plan.jitters:
        days = observed_s // 86400
        logs = {int(d): jitter_log(jitter, int(d)) for d in np.unique(days)}
        moved = np.exp(np.vectorize(logs.get, otypes=[float])(days))
        factor = np.where((observed_s >= since) & members[None, :], factor * moved, factor)
    if plan.typos:
        factor = factor.copy()
        for typo_factor, start, end, offer in plan.typos:
            during = (observed_s[:, offer] >= start) & (observed_s[:, offer] < end)
            factor[during, offer] *= typo_factor
    return factor, shown
