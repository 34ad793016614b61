"""Every way an offer can run a workload (a slice or a card that fits; n × the offer, model
parallel when one card is too small, data parallel when the work is given; a server as a whole),
each costed for the usage pattern as an `Option`, or the reason it cannot serve."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from pipelines.advisor.billing import TERM_DAYS, Bill, bill
from pipelines.advisor.memory import Estimate
from pipelines.advisor.offers import Offer
from pipelines.advisor.throughput import (
    DATA_PARALLEL_ADDED_CARD,
    MAX_CARDS,
    SLICE_EFFICIENCY,
    SPOT_TIME_OVERHEAD,
    card_throughput,
    data_parallel_cards,
    interconnect,
    model_parallel_efficiency,
)
from pipelines.advisor.workload import Workload

KINDS = ("whole card", "slice", "multi-GPU", "spot")


@dataclass(frozen=True)
class Option:
    """One configuration of one offer, costed for the workload."""

    kind: str                  # "whole card" | "slice" | "multi-GPU" | "spot"
    offer: Offer
    rentals: int               # how many of the offer are rented (n single cards, k servers)
    cards: int                 # cards in the configuration (1 for a slice)
    parallelism: str           # "single" | "data-parallel" | "model-parallel"
    need_gb_per_card: float
    vram_gb_per_card: float
    throughput: float          # A100-80GB equivalents, all efficiencies applied
    wall_hours: float          # hours the configuration runs (and, if hourly, is paid)
    days_used: int
    work_gpu_hours: float      # A100-80GB GPU-hours of work done in wall_hours
    billing: Bill
    cost_cny: float
    cost_usd: float | None
    why: tuple[str, ...]
    alternatives: tuple[str, ...] = ()   # the same rental under its other billing periods

    @property
    def config(self) -> str:
        variant = f" {self.offer.gpu_variant}" if self.offer.gpu_variant else ""
        model = self.offer.gpu_model + variant
        if self.offer.is_slice:
            return f"{_share(self.offer.gpu_fraction)} {model} ({self.vram_gb_per_card:g} GB)"
        return f"{self.cards} × {model}" if self.cards > 1 else f"1 × {model}"

    @property
    def cny_per_work_hour(self) -> float:
        """What one A100-80GB-hour of work costs on this configuration."""
        return self.cost_cny / self.work_gpu_hours if self.work_gpu_hours else math.inf


def _share(fraction: float) -> str:
    for denominator in (2, 3, 4, 5, 7, 8, 10, 16, 20):
        numerator = round(fraction * denominator)
        if abs(numerator / denominator - fraction) < 1e-6:
            return f"{numerator}/{denominator}"
    return f"{fraction:g}"


def _powers_of_two(start: int, stop: int) -> list[int]:
    out, n = [], 1
    while n <= stop:
        if n >= start:
            out.append(n)
        n *= 2
    return out


def configurations(offer: Offer, workload: Workload, estimate: Estimate,
                   excluded: Counter) -> list[Option]:
    """Every way `offer` can run the workload: a slice or a card that fits; n × the offer (model
    parallel when one card is too small; data parallel when the work is given, to finish sooner);
    a multi-card server as a whole. An offer with no way is counted in `excluded` by reason."""
    options, reasons = _configurations(offer, workload, estimate)
    if not options:
        excluded[reasons[0] if reasons else "no configuration"] += 1
    return options


def _configurations(offer: Offer, workload: Workload,
                    estimate: Estimate) -> tuple[list[Option], list[str]]:
    if offer.available is False:
        return [], ["sold out"]
    if offer.offer_kind == "spot" and not workload.interruptible:
        return [], ["spot, and the workload cannot be interrupted"]
    per_card = card_throughput(offer, workload.training)
    if per_card is None:
        return [], [f"no throughput figure for {offer.gpu_model}"]
    if offer.billing_period not in ("hour", *TERM_DAYS):
        return [], [f"billing period {offer.billing_period}"]
    vram = offer.card_vram_gb
    need = estimate.total_gb
    fits_one = vram > 0 and need <= vram
    size = offer.gpu_count
    link = interconnect(offer)
    shapes: list[tuple[int, str]] = []   # (cards, parallelism)
    if offer.is_slice:
        if not fits_one:
            return [], ["does not fit the slice"]
        shapes.append((1, "slice"))
    elif fits_one:
        if size == 1:
            shapes.append((1, "single"))
        if workload.gpu_hours:   # more cards only help when there is a given amount of work
            shapes += [(size * k, "data-parallel") for k in _powers_of_two(1, 8)
                       if 1 < size * k <= max(8, size)]
        elif size > 1:
            return [], ["more cards than the workload needs (give --gpu-hours to weigh speed)"]
    else:
        minimum = max(2, math.ceil(need / vram - 1e-9)) if vram else MAX_CARDS + 1
        # tensor parallelism splits evenly: powers of two of single cards, or of whole servers
        counts = [size * k for k in _powers_of_two(1, MAX_CARDS)
                  if minimum <= size * k <= MAX_CARDS]
        if not counts:
            return [], [f"needs more than {MAX_CARDS} cards"]
        if not workload.gpu_hours:   # no work given: the fewest cards that hold the model
            counts = counts[:1]
        shapes += [(n, "model-parallel") for n in counts]
    options: list[Option] = []
    reasons: list[str] = []
    for cards, parallelism in shapes:
        if parallelism == "slice":
            throughput = per_card * offer.gpu_fraction * SLICE_EFFICIENCY
            notes = [f"slice {_share(offer.gpu_fraction)} × {SLICE_EFFICIENCY} shared-bandwidth "
                     "penalty"]
            parallelism = "single"
        elif parallelism == "single":
            throughput, notes = per_card, []
        elif parallelism == "data-parallel":
            equivalents = data_parallel_cards(cards)
            throughput = per_card * equivalents
            notes = [f"data parallel on {cards} cards: 1 + {cards - 1} × "
                     f"{DATA_PARALLEL_ADDED_CARD} = {equivalents:g} cards of work"]
        else:
            efficiency = model_parallel_efficiency(cards, link)
            throughput = per_card * cards * efficiency
            where = "across servers" if cards > 8 else f"{link} interconnect"
            notes = [f"model parallel on {cards} cards at {efficiency:.0%} each ({where})"]
        if per_card != 1:
            variant = f" {offer.gpu_variant}" if offer.gpu_variant else ""
            use = "training" if workload.training else "inference"
            notes.insert(0, f"{offer.gpu_model}{variant} = {per_card:g} × A100-80GB ({use})")
        need_per_card = need / cards if parallelism == "model-parallel" else need
        costed = _costed(offer, workload, cards // size if not offer.is_slice else 1, cards,
                         parallelism, need_per_card, throughput, notes)
        if isinstance(costed, str):
            reasons.append(costed)
        else:
            options.append(costed)
    return options, reasons


def _costed(offer: Offer, workload: Workload, rentals: int, cards: int, parallelism: str,
            need_per_card: float, throughput: float, notes: list[str]) -> Option | str:
    """The option costed for the usage pattern, or why it cannot serve it."""
    notes = list(notes)
    spot = offer.offer_kind == "spot"
    effective = throughput / SPOT_TIME_OVERHEAD if spot else throughput
    if spot:
        notes.append(f"spot: +{SPOT_TIME_OVERHEAD - 1:.0%} time for checkpoints and restarts")
    if workload.gpu_hours:
        hours = workload.gpu_hours / effective
        days = math.ceil(hours / workload.hours_per_day - 1e-9)
        if days > workload.days:
            return f"does not finish in {workload.days} days at {workload.hours_per_day:g} h/day"
    else:
        hours, days = workload.hours_per_day * workload.days, workload.days
    one = bill(offer, hours, days)
    if one is None:
        return f"billing period {offer.billing_period}"
    cost = one.cost_cny * rentals
    rate = offer.usd_per_cny
    kind = ("spot" if spot else "slice" if offer.is_slice
            else "multi-GPU" if cards > 1 else "whole card")
    vram = offer.card_vram_gb
    scope = " per card" if parallelism == "model-parallel" else ""
    why = [f"fits: {need_per_card:,.1f} GB of {vram:g} GB{scope}",
           f"billing: {offer.billing_period} ({one.text}"
           + (f" × {rentals} rentals" if rentals > 1 else "") + f" = {cost:,.0f} CNY)",
           *notes,
           f"throughput {effective:.3g} × A100-80GB → {hours:,.1f} h over {days} day"
           f"{'s' if days != 1 else ''}, {hours * effective:,.1f} A100-80GB-hours of work"]
    if rentals > 1 and offer.gpu_count == 1:
        why.append(f"{rentals} × the single-card offer (assumes {offer.vendor} has {rentals} "
                   "cards free in the region)")
    return Option(kind=kind, offer=offer, rentals=rentals, cards=cards, parallelism=parallelism,
                  need_gb_per_card=need_per_card, vram_gb_per_card=vram, throughput=effective,
                  wall_hours=hours, days_used=days, work_gpu_hours=hours * effective,
                  billing=one, cost_cny=cost, cost_usd=cost * rate if rate else None,
                  why=tuple(why))
