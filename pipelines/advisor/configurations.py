"""Every way an offer can run a workload, as a vendor sells it: a slice or a card that fits; n of
a single-card offer in one server of at most the size the vendor lists; a server as listed; more
servers only where the vendor states a cluster interconnect (clusters.toml), and never of consumer
cards unless the listing says so. Each is costed for the usage pattern as an `Option`, or the
reason it cannot serve is given."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from pipelines.advisor.billing import TERM_DAYS, Bill, bill
from pipelines.advisor.clusters import server_key, stated_cluster
from pipelines.advisor.efficiency import efficiency
from pipelines.advisor.memory import Estimate
from pipelines.advisor.offers import Offer
from pipelines.advisor.throughput import (
    card_throughput,
    data_parallel_cards,
    interconnect,
    is_consumer,
    model_parallel_efficiency,
)
from pipelines.advisor.workload import Workload
from spiders.parsing.prices import HOURS_PER_PERIOD

KINDS = ("whole card", "slice", "multi-GPU", "spot")
MARKETPLACE = "marketplace"   # the vendor_kind whose listings are hosts, not a pool of cards
NO_CLUSTER = ("needs more cards than the vendor's largest listed server, and the vendor states no "
              "cluster interconnect for it (InfiniBand, RoCE, a cluster product)")
CONSUMER_CLUSTER = ("needs more cards than the vendor's largest listed server: consumer cards are "
                    "not run across servers (no listing sells them as a cluster)")


@dataclass(frozen=True)
class Option:
    """One configuration of one offer, costed for the workload."""

    kind: str                  # "whole card" | "slice" | "multi-GPU" | "spot"
    offer: Offer
    rentals: int               # how many of the offer are rented (n single cards, k servers)
    cards: int                 # cards in the configuration (1 for a slice)
    # "single" | "data-parallel" | "model-parallel" | "independent runs" | "replicas"
    parallelism: str
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
    refused_by: tuple[str, ...] = ()     # the guides' rules that keep it from rank 1
    alternatives: tuple[str, ...] = ()   # the same rental under its other billing periods
    interconnect: str = ""     # the link assumed between the cards ("" for one card or a slice)
    across_servers: bool = False

    @property
    def config(self) -> str:
        variant = f" {self.offer.gpu_variant}" if self.offer.gpu_variant else ""
        model = self.offer.gpu_model + variant
        copies = self.parallelism in ("independent runs", "replicas")
        if copies and not self.offer.is_slice and self.cards == 1:
            return f"{self.rentals} × {model}"
        if self.offer.is_slice:
            many = f"{self.rentals} × " if self.rentals > 1 else ""
            return (f"{many}{_share(self.offer.gpu_fraction)} {model} "
                    f"({self.vram_gb_per_card:g} GB)")
        return f"{self.cards} × {model}" if self.cards > 1 else f"1 × {model}"

    @property
    def rent_per_hour_cny(self) -> float:
        """The rent of the configuration per hour, whatever its billing period (a column, not
        the order)."""
        return self.offer.instance_price_cny / HOURS_PER_PERIOD[self.offer.billing_period] \
            * self.rentals

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


def configurations(offer: Offer, workload: Workload, estimate: Estimate, excluded: Counter,
                   server_sizes: dict[tuple, int] | None = None) -> list[Option]:
    """Every way `offer` can run the workload (`server_sizes`: the largest server each vendor
    lists per card, clusters.server_sizes; without it, or at a marketplace, the offer's own
    size). An offer with no way is counted in `excluded` by reason."""
    size = offer.gpu_count
    # a marketplace listing is one host's cards: its single cards are not pooled into a server
    pooled = offer.vendor_kind != MARKETPLACE
    server = max(size, (server_sizes or {}).get(server_key(offer), size)) if pooled else size
    options, reasons = _configurations(offer, workload, estimate, server)
    if not options:
        excluded[reasons[0] if reasons else "no configuration"] += 1
    return options


def _shapes(offer: Offer, workload: Workload, estimate: Estimate,
            server: int) -> tuple[list[tuple[int, str]], list[str]]:
    """(cards, parallelism) of each configuration the offer allows, and why others are not."""
    e = efficiency()
    vram, need, size = offer.card_vram_gb, estimate.total_gb, offer.gpu_count
    fits_one = vram > 0 and need <= vram
    if offer.is_slice:
        return ([(1, "slice")], []) if fits_one else ([], ["does not fit the slice"])
    if fits_one:
        shapes = [(1, "single")] if size == 1 else []
        if workload.finish_within_days:   # more cards only help to finish in time
            shapes += [(size * k, "data-parallel") for k in _powers_of_two(1, 8)
                       if 1 < size * k <= max(max(e.data_parallel_speedup), size)]
        elif size > 1:
            return [], ["more cards than the workload needs (give --gpu-hours to weigh speed)"]
    else:
        minimum = max(2, math.ceil(need / vram - 1e-9)) if vram else e.max_cards + 1
        # tensor parallelism splits evenly: powers of two of single cards, or of whole servers
        counts = [size * k for k in _powers_of_two(1, e.max_cards)
                  if minimum <= size * k <= e.max_cards]
        if not counts:
            return [], [f"needs more than {e.max_cards} cards"]
        shapes = [(n, "model-parallel") for n in counts]
    allowed, reasons = [], []
    for cards, parallelism in shapes:
        reason = _across_servers_reason(offer, cards, server)
        if reason:
            reasons.append(reason)
        else:
            allowed.append((cards, parallelism))
    if not workload.finish_within_days:   # no time bound: the fewest cards that hold the model
        allowed = allowed[:1]
    return allowed, reasons


def _across_servers(offer: Offer, cards: int, server: int) -> bool:
    return cards > (offer.gpu_count if offer.gpu_count > 1 else server)


def _across_servers_reason(offer: Offer, cards: int, server: int) -> str | None:
    """Why `cards` cards of the offer cannot be had (None: they can): more than one server needs
    a cluster interconnect the vendor states, and never consumer cards unless it says so."""
    if not _across_servers(offer, cards, server):
        return None
    cluster = stated_cluster(offer)
    if cluster is None:
        return NO_CLUSTER
    if is_consumer(offer) and not cluster.consumer_cards:
        return CONSUMER_CLUSTER
    return None


def _configurations(offer: Offer, workload: Workload, estimate: Estimate,
                    server: int) -> tuple[list[Option], list[str]]:
    e = efficiency()
    if offer.available is False:
        return [], ["sold out"]
    if offer.offer_kind == "spot" and not workload.interruptible:
        return [], ["spot, and the workload cannot be interrupted"]
    per_card = card_throughput(offer, workload.training)
    if per_card is None:
        return [], [f"{offer.gpu_model} is not in the card catalog"]
    if offer.billing_period not in ("hour", *TERM_DAYS):
        return [], [f"billing period {offer.billing_period}"]
    shapes, shape_reasons = _shapes(offer, workload, estimate, server)
    link = interconnect(offer)
    options: list[Option] = []
    reasons: list[str] = []   # a shape that could be had but does not serve comes first
    for cards, parallelism in shapes:
        across = _across_servers(offer, cards, server)
        servers = math.ceil(cards / (offer.gpu_count if offer.gpu_count > 1 else server))
        if cards == 1:
            wiring = ""
        elif across:
            cluster = stated_cluster(offer)
            wiring = (f"{cluster.interconnect} across {servers} servers ({offer.vendor} states "
                      f"it), {link.name} within each")
        else:
            wiring = f"{link.name} within one server"
        if parallelism == "slice":
            throughput = per_card * offer.gpu_fraction * e.slice_speed
            notes = [f"slice {_share(offer.gpu_fraction)} × {e.slice_speed:g} shared-card speed"]
            parallelism = "single"
        elif parallelism == "single":
            throughput, notes = per_card, []
        elif parallelism == "data-parallel":
            equivalents = data_parallel_cards(cards)
            throughput = per_card * equivalents
            notes = [f"data parallel on {cards} cards: {equivalents:g}× one card"]
        else:
            efficiency_used = model_parallel_efficiency(cards, link, across)
            throughput = per_card * cards * efficiency_used
            notes = [f"model parallel on {cards} cards at {efficiency_used:.0%} each"]
        if wiring:
            notes.append(f"interconnect: {wiring}")
        if per_card != 1:
            variant = f" {offer.gpu_variant}" if offer.gpu_variant else ""
            use = "training" if workload.training else "inference"
            notes.insert(0, f"{offer.gpu_model}{variant} = {per_card:.3g} × A100-80GB ({use}, "
                            "from its TFLOPS and bandwidth)")
        need_per_card = estimate.total_gb / cards if parallelism == "model-parallel" \
            else estimate.total_gb
        rentals = cards // offer.gpu_count if not offer.is_slice else 1
        # concurrent runs (a parameter search) each take their own card or slice: N rentals,
        # N times the throughput, each run's time; larger runs add their work one after another
        runs = workload.runs if parallelism == "single" and rentals == 1 and cards == 1 else 1
        if runs > 1:
            # one card (or slice) per run: `cards` stays the configuration of one run
            throughput, rentals, parallelism = throughput * runs, runs, "independent runs"
            notes.append(f"{runs} concurrent runs, each on its own "
                         f"{'slice' if offer.is_slice else 'card'}")
        costed = _costed(offer, workload, rentals, cards, parallelism, need_per_card, throughput,
                         notes, (server, wiring, across))
        if isinstance(costed, str):
            reasons.append(costed)
        else:
            options.append(costed)
    return options, reasons + shape_reasons


def serving(workload: Workload) -> bool:
    """Inference over a window (no --gpu-hours): the window is fixed, replicas carry the load."""
    return not workload.training and not workload.gpu_hours


def _costed(offer: Offer, workload: Workload, rentals: int, cards: int, parallelism: str,
            need_per_card: float, throughput: float, notes: list[str],
            wiring: tuple[int, str, bool]) -> Option | str:
    """The option costed for the usage pattern, or why it cannot serve it (`wiring`: the
    vendor's largest server, the interconnect assumed, whether it spans servers)."""
    server, link, across = wiring
    notes = list(notes)
    spot = offer.offer_kind == "spot"
    overhead = efficiency().spot_time_overhead
    effective = throughput / overhead if spot else throughput
    if spot:
        notes.append(f"spot: +{overhead - 1:.0%} time for checkpoints and restarts")
    if serving(workload):
        # serving runs the window it is given: a slower option serves one A100-80GB's load
        # with more replicas, not for longer
        replicas = max(1, math.ceil(1 / effective - 1e-9))
        if replicas > 1:
            notes.append(f"serving: {replicas} replicas carry one A100-80GB's load over the "
                         "window")
            # `cards` stays the configuration of one replica; `rentals` counts them
            effective, rentals = effective * replicas, rentals * replicas
            parallelism = "replicas" if parallelism == "single" else parallelism
        hours, days = workload.hours_per_day * workload.days, workload.days
    else:   # the cost of finishing the work: a slower option runs (and is billed) longer
        hours = workload.work_hours / effective
        days = math.ceil(hours / workload.hours_per_day - 1e-9)
    limit = workload.finish_within_days
    if limit and days > limit:
        return f"does not finish within {limit:g} days at {workload.hours_per_day:g} h/day"
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
    if parallelism == "independent runs":
        why.append(f"{rentals} × the offer, one per run (assumes {offer.vendor} has {rentals} "
                   "free)")
    elif rentals > 1 and offer.gpu_count == 1:
        where = f"one of its servers of up to {server} cards" if cards <= server else \
            "its cluster"
        why.append(f"{rentals} × the single-card offer (assumes {offer.vendor} has {rentals} "
                   f"cards free in {where})")
    return Option(kind=kind, offer=offer, rentals=rentals, cards=cards, parallelism=parallelism,
                  need_gb_per_card=need_per_card, vram_gb_per_card=vram, throughput=effective,
                  wall_hours=hours, days_used=days, work_gpu_hours=hours * effective,
                  billing=one, cost_cny=cost, cost_usd=cost * rate if rate else None,
                  why=tuple(why), interconnect=link, across_servers=across)
