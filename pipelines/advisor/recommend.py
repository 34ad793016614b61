"""The advice: every feasible configuration of today's real, counted, dated offers
(advisable.py) for a workload, one per rental and kind at its cheapest billing period, ranked by
the cost of finishing the work; the guides' rules decide what may rank first (option_rules.py:
a refused option goes below the line with its rule), and the verdicts are the answer's."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime

from pipelines.advisor.advisable import advisable
from pipelines.advisor.clusters import server_sizes
from pipelines.advisor.configurations import KINDS, Option, configurations
from pipelines.advisor.decision_rules import Verdict, verdicts
from pipelines.advisor.memory import Estimate, estimate_memory
from pipelines.advisor.offers import Offer
from pipelines.advisor.option_rules import answer_verdicts, refusals
from pipelines.advisor.region_filter import region_predicate
from pipelines.advisor.workload import Workload


@dataclass
class Advice:
    """The ranked options for a workload, the best of each kind, and the offers left out (by
    reason)."""

    workload: Workload
    estimate: Estimate
    options: list[Option]        # ranked: cheapest to finish first, the refused below the line
    best_per_kind: dict[str, Option]
    excluded: Counter = field(default_factory=Counter)   # reason -> offers
    region_note: str | None = None
    verdicts: list[Verdict] = field(default_factory=list)   # the answer's, in RULES order
    include_modeled: bool = False
    offers: list[Offer] = field(default_factory=list)     # the advisable offers (terms)
    signals: dict = field(default_factory=dict)   # savings evidence (savings.py), set by callers

    @property
    def answer(self) -> Option | None:
        """Rank 1, when no rule refuses it."""
        return self.options[0] if self.options and not self.options[0].refused_by else None

    @property
    def allowed(self) -> list[Option]:
        return [o for o in self.options if not o.refused_by]


def _rank_key(option: Option) -> tuple:
    seen = option.offer.last_seen_at
    return (bool(option.refused_by), round(option.cost_cny, 6), option.wall_hours,
            -(seen.timestamp() if isinstance(seen, datetime) else 0), option.offer.source,
            option.offer.sku or "", option.offer.region_code)


def advise(workload: Workload, offers: Iterable[Offer],
           measured_claims: Mapping[str, Mapping] | None = None,
           include_modeled: bool = False) -> Advice:
    """Rank every feasible configuration of `offers` for `workload` by the cost of finishing
    the work; one option per rental and kind (its cheapest billing period and card count), the
    options a rule refuses below the line, the best of each kind, and the verdicts of the
    guides' rules for the answer (`measured_claims`: marts.market_claims rows by claim_id,
    cited beside the price claims). Only real, counted, dated prices, each offer once, unless
    `include_modeled` (advisable.py)."""
    estimate = estimate_memory(workload)
    excluded: Counter = Counter()
    offers = advisable(offers, include_modeled, excluded)
    region_note = None
    if workload.region:
        matches, region_note = region_predicate(workload.region, offers)
        inside = [o for o in offers if matches(o)]
        excluded[f"outside {region_note}"] += len(offers) - len(inside)
        offers = inside
    best: dict[tuple, Option] = {}
    variants: dict[tuple, list[Option]] = {}
    sizes = server_sizes(offers)
    for offer in offers:
        for option in configurations(offer, workload, estimate, excluded, sizes):
            key = (offer.product_key, option.kind)
            variants.setdefault(key, []).append(option)
            if key not in best or _rank_key(option) < _rank_key(best[key]):
                best[key] = option
    ranked = []
    for key, option in best.items():
        cheapest: dict[str, float] = {}   # the rental's other billing periods, at their best
        for other in variants[key]:
            period = other.offer.billing_period
            if period != option.offer.billing_period:
                cheapest[period] = min(cheapest.get(period, math.inf), other.cost_cny)
        others = tuple(f"{period}: {cost:,.0f} CNY" for period, cost in sorted(cheapest.items()))
        if others:
            option = replace(option, alternatives=others, why=(
                *option.why[:2], f"cheapest billing of this rental (also {', '.join(others)})",
                *option.why[2:]))
        ranked.append(option)
    ranked.sort(key=_rank_key)
    rules = verdicts(workload, estimate, offers, ranked, measured_claims)
    ranked = sorted((replace(o, refused_by=refusals(o, workload, rules)) for o in ranked),
                    key=_rank_key)
    per_kind: dict[str, Option] = {}
    for option in ranked:
        if not option.refused_by:
            per_kind.setdefault(option.kind, option)
    return Advice(workload, estimate, ranked, {k: per_kind[k] for k in KINDS if k in per_kind},
                  excluded, region_note, answer_verdicts(rules, ranked), include_modeled,
                  offers)
