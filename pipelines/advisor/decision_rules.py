"""The guides' decision rules as explicit verdicts: whole card vs slice, exclusive vs shared,
single vs multi-GPU, spot allowed or not, monthly vs hourly. Each names its rule and the user's
numbers that decided it; the thresholds and efficiencies are efficiency.toml's, the price claims
the scorecard's (pipelines/advisor/efficiency.py)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pipelines.advisor.configurations import Option
from pipelines.advisor.efficiency import cited_claims, efficiency, step_value
from pipelines.advisor.memory import Estimate
from pipelines.advisor.offers import Offer
from pipelines.advisor.workload import Workload

RULES = ("whole card vs slice", "exclusive vs shared", "single vs multi-GPU", "spot",
         "monthly vs hourly")


@dataclass(frozen=True)
class Verdict:
    """One rule applied to the workload."""

    rule: str                   # one of RULES
    verdict: str                # "whole card", "exclusive", "multi-GPU (model parallel)", ...
    because: str                # the user's numbers against the rule
    rule_text: str              # the guides' rule, in words
    holds: tuple[str, ...] = ()       # the conditions that hold (exclusive vs shared)
    figures: dict = field(default_factory=dict)   # the numbers, for JSON

    def line(self) -> str:
        return f"{self.rule}: {self.verdict} — {self.because}"


def run_hours(workload: Workload) -> float:
    """How long the workload runs without stopping: a day's hours, or every hour of the days
    when it runs round the clock; no longer than its work on one A100-80GB."""
    hours = workload.hours_per_day * (workload.days if workload.hours_per_day >= 24 else 1)
    return min(hours, workload.gpu_hours) if workload.gpu_hours else hours


def _cards_offered(offers: Sequence[Offer]) -> tuple[float | None, float | None]:
    """(largest slice, largest whole card) among the offers, in GB of one card."""
    live = [o for o in offers if o.available is not False and o.card_vram_gb > 0]
    slices = [o.card_vram_gb for o in live if o.is_slice]
    cards = [o.card_vram_gb for o in live if not o.is_slice]
    return (max(slices) if slices else None), (max(cards) if cards else None)


def _power_of_two_at_least(n: float) -> int:
    return 1 << max(0, math.ceil(math.log2(max(n, 1)) - 1e-9))


def _budget(options: Sequence[Option]) -> str:
    """What the cheapest slice and the cheapest whole card(s) cost today, when both fit."""
    slice_ = next((o for o in options if o.kind == "slice"), None)
    whole = next((o for o in options if o.kind in ("whole card", "multi-GPU")), None)
    if slice_ is None or whole is None:
        return ""
    return (f"; budget: the cheapest slice {slice_.cost_cny:,.0f} CNY, the cheapest whole card "
            f"{whole.cost_cny:,.0f} CNY")


def whole_or_slice(workload: Workload, estimate: Estimate, largest_slice: float | None,
                   options: Sequence[Option] = ()) -> Verdict:
    r = efficiency().rules
    peak, card = estimate.total_gb, float(r["card_gb"])
    share = peak / card
    whole: list[str] = []
    if largest_slice is None:
        whole.append("no slice is offered")
    elif peak > largest_slice:
        whole.append(f"peak memory {peak:,.1f} GB is above the largest slice, {largest_slice:g} GB")
    if share > r["whole_card_memory_share"] and workload.params > r["whole_card_min_params"]:
        whole.append(f"{peak:,.1f} GB is {share:.0%} of a card of {card:g} GB (> "
                     f"{r['whole_card_memory_share']:.0%}) with {workload.params / 1e9:g}B params")
    if workload.task in ("full-finetune", "pretrain") and run_hours(workload) > r["long_run_hours"]:
        whole.append(f"compute-dense {workload.task} running {run_hours(workload):,.0f} h (> "
                     f"{r['long_run_hours']:g} h)")
    if peak > card:
        whole.append(f"{peak:,.1f} GB needs several cards talking to each other")
    if whole:
        verdict, because = "whole card", "; ".join(whole)
    elif share < r["slice_memory_share"]:
        verdict = "slice"
        because = (f"{peak:,.1f} GB is {share:.0%} of a card of {card:g} GB (< "
                   f"{r['slice_memory_share']:.0%}), fits the {largest_slice:g} GB slice")
    else:
        verdict = "slice first, then whole"
        because = (f"{peak:,.1f} GB fits the {largest_slice:g} GB slice and the run is short or "
                   f"light ({workload.task}, {run_hours(workload):,.0f} h): make it run on a "
                   "slice, rent whole cards for the real run")
    because += _budget(options)
    return Verdict(RULES[0], verdict, because,
                   "peak memory above the largest slice, above 80 % of a card (> 200 M params), "
                   "compute-dense long runs or multi-card communication → whole card; below "
                   "40 % of a card, small fine-tunes, debugging, inference validation → slice",
                   figures={"peak_gb": round(peak, 2), "largest_slice_gb": largest_slice,
                            "card_gb": card, "memory_share": round(share, 4),
                            "run_hours": run_hours(workload)})


def exclusive_or_shared(workload: Workload, estimate: Estimate,
                        largest_card: float | None) -> Verdict:
    e = efficiency()
    r = e.rules
    peak, card = estimate.total_gb, float(r["card_gb"])
    hours = run_hours(workload)
    cards = _power_of_two_at_least(peak / (largest_card or card)) if peak > (largest_card or card) \
        else 1
    conditions = [
        (hours > r["exclusive_run_hours"], f"run {hours:,.0f} h > {r['exclusive_run_hours']:g} h"),
        (peak > r["exclusive_memory_share"] * card,
         f"memory {peak:,.1f} GB > {r['exclusive_memory_share']:.0%} of a card of {card:g} GB"),
        (cards >= r["exclusive_model_parallel_cards"],
         f"model parallel over {cards} cards (≥ {r['exclusive_model_parallel_cards']})"
         if cards > 1 else
         f"model parallel over ≥ {r['exclusive_model_parallel_cards']} cards (one card holds it)"),
        (not workload.interruptible, "cannot tolerate interruption"),
    ]
    holds = tuple(text for held, text in conditions if held)
    exclusive = len(holds) >= r["exclusive_min_conditions"]
    fails = [text for held, text in conditions if not held]
    because = (f"{len(holds)} of 4 hold: {'; '.join(holds) or 'none'}"
               + (f" (not: {'; '.join(fails)})" if fails else ""))
    if not exclusive:
        because += (f"; a shared card runs at about {e.slice_speed:.0%} of an exclusive one "
                    f"(guides {e.slice_guides[0]:.0%}-{e.slice_guides[1]:.0%})")
    return Verdict(RULES[1], "exclusive" if exclusive else "shared", because,
                   "exclusive when at least two of: a run longer than 8 h, peak memory above 80 % "
                   "of a card, model parallel over 2 or more cards, no tolerance for "
                   "interruption; otherwise shared", holds=holds,
                   figures={"conditions_held": len(holds), "run_hours": hours,
                            "peak_gb": round(peak, 2), "model_parallel_cards": cards,
                            "interruptible": workload.interruptible})


def single_or_multi(workload: Workload, estimate: Estimate,
                    largest_card: float | None) -> Verdict:
    e = efficiency()
    peak = estimate.total_gb
    card = largest_card or float(e.rules["card_gb"])
    rule = ("memory decides first: a task that fits one card stays on one card unless it is too "
            "slow; data parallel 4 cards 2-3.6×, 8 cards ≥ 7×; model parallel 60-75 % per card "
            "on 8 cards; NVLink vs PCIe or InfiniBand/RoCE 20-40 %")
    if peak > card:
        cards = _power_of_two_at_least(peak / card)
        per_card = step_value(e.model_parallel_per_card, cards) if cards <= 8 else \
            step_value(e.across_servers_per_card, cards)
        slow = per_card * e.slow_link_factor if cards <= 8 else per_card
        low, high = e.model_parallel_guides_8
        link = (f"over a fast link ({slow:.0%} over PCIe)" if cards <= 8 else
                "across servers, over a cluster interconnect a vendor states")
        because = (f"{peak:,.1f} GB does not fit the largest card offered ({card:g} GB): at least "
                   f"{cards} cards model parallel, each at {per_card:.0%} {link}"
                   + f" = {cards * per_card:.3g}× one card (guides: {low:.0%}-{high:.0%} per "
                     "card on 8 cards)")
        return Verdict(RULES[2], "multi-GPU (model parallel)", because, rule,
                       figures={"peak_gb": round(peak, 2), "largest_card_gb": card,
                                "cards": cards, "per_card_efficiency": per_card,
                                "guides_per_card_8": [low, high]})
    if workload.gpu_hours and workload.gpu_hours > workload.hours_per_day * workload.days:
        available = workload.hours_per_day * workload.days
        needed = workload.gpu_hours / available
        table = e.data_parallel_speedup
        cards = next((n for n, s in table.items() if s >= needed), None)
        guides = e.data_parallel_guides.get(cards or max(table), ())
        span = "-".join(f"{g:g}" for g in guides) + ("×" if len(guides) > 1 else "× or more")
        because = (f"fits one card ({peak:,.1f} of {card:g} GB) but {workload.gpu_hours:g} "
                   f"A100-hours in {available:g} h need {needed:.2f}× one A100-80GB: "
                   + (f"data parallel on {cards} cards, planned at {table[cards]:g}× "
                      f"(guides {span})" if cards else
                      f"more than the {table[max(table)]:g}× of {max(table)} cards: faster "
                      "cards or more days")
                   + "; or one faster card")
        return Verdict(RULES[2], "multi-GPU (data parallel)", because, rule,
                       figures={"peak_gb": round(peak, 2), "speedup_needed": round(needed, 3),
                                "cards": cards, "speedup_used": table.get(cards),
                                "guides_speedup": list(guides)})
    because = f"fits one card ({peak:,.1f} of {card:g} GB)" + (
        f" and {workload.gpu_hours:g} A100-hours finish in the "
        f"{workload.hours_per_day * workload.days:g} h available" if workload.gpu_hours
        else "; no --gpu-hours, so no reason to go faster")
    return Verdict(RULES[2], "single card", because, rule,
                   figures={"peak_gb": round(peak, 2), "largest_card_gb": card})


def _measured(claim_id: str, measured: Mapping[str, Mapping]) -> str:
    row = measured.get(claim_id)
    if not row or row.get("median_value") is None:
        return "not measured on today's prices"
    return f"measured median {float(row['median_value']):.3g} ({row.get('verdict')})"


def spot_allowed(workload: Workload, measured: Mapping[str, Mapping]) -> Verdict:
    e = efficiency()
    claim = cited_claims()["spot_share"]
    price = (f"guides: spot at {claim.expected_low:g}-{claim.expected_high:g} % of on-demand "
             f"({claim.claim_id}: {_measured(claim.claim_id, measured)})")
    if workload.interruptible:
        verdict = "allowed"
        because = (f"the job checkpoints and resumes (--interruptible): +"
                   f"{e.spot_time_overhead - 1:.0%} time for restarts; {price}")
    else:
        verdict = "not allowed"
        because = f"the job cannot be interrupted (no --interruptible); {price}"
    return Verdict(RULES[3], verdict, because,
                   "spot/preemptible only for work that checkpoints and resumes",
                   figures={"interruptible": workload.interruptible,
                            "spot_time_overhead": e.spot_time_overhead})


def monthly_or_hourly(workload: Workload, options: Sequence[Option],
                      measured: Mapping[str, Mapping]) -> Verdict:
    r = efficiency().rules
    claim = cited_claims()["monthly_saving"]
    saving = (claim.expected_low or 0) / 100
    month = float(r["month_hours"])
    used = workload.hours_per_day * min(workload.days, 30)
    if options:
        used = min(used, options[0].wall_hours)
    break_even = (1 - saving) * month
    verdict = "monthly" if used >= break_even else "hourly (or daily)"
    cheapest = (f"; today's cheapest option is billed per {options[0].offer.billing_period}"
                if options else "")
    because = (f"{used:,.0f} h used in the first 30 days against {break_even:,.0f} h, the "
               f"break-even of a monthly package saving {saving:.0%} on {month:g} h "
               f"({claim.claim_id}: {_measured(claim.claim_id, measured)}){cheapest}")
    return Verdict(RULES[4], verdict, because,
                   "a monthly package saves 20-40 %+ against paying hourly for a full month: it "
                   "pays off once the hours used in a month pass (1 - saving) × 730",
                   figures={"hours_in_first_30_days": round(used, 2),
                            "break_even_hours": round(break_even, 2), "saving": saving})


def verdicts(workload: Workload, estimate: Estimate, offers: Sequence[Offer],
             options: Sequence[Option],
             measured: Mapping[str, Mapping] | None = None) -> list[Verdict]:
    """Every rule's verdict for the workload, on today's offers and the ranked options."""
    largest_slice, largest_card = _cards_offered(offers)
    measured = measured or {}
    return [whole_or_slice(workload, estimate, largest_slice, options),
            exclusive_or_shared(workload, estimate, largest_card),
            single_or_multi(workload, estimate, largest_card),
            spot_allowed(workload, measured),
            monthly_or_hourly(workload, options, measured)]
