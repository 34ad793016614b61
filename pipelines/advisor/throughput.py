"""Relative throughput and scaling: how much work one card of an offer does (in A100-80GB
equivalents), how its cards are linked, and what slicing, data parallelism, model parallelism and
spot restarts cost.

Every card's throughput comes from one model over its public specifications (the card catalog's
dense BF16 TFLOPS and memory bandwidth, spiders/parsing/card_catalog.csv): a step on the reference
card spends the share w of its time compute-bound and 1 - w bandwidth-bound, so

    throughput = 1 / (w / (TFLOPS / reference TFLOPS) + (1 - w) / (GB/s / reference GB/s))

with w from efficiency.toml (training compute-bound, inference bandwidth-bound). The scaling
figures are efficiency.toml's too (pipelines/advisor/efficiency.py)."""

from __future__ import annotations

from dataclasses import dataclass

from pipelines.advisor.efficiency import efficiency, step_value
from pipelines.advisor.offers import Offer
from spiders.parsing.card_catalog import CARDS, CARDS_BY_FAMILY, Card

CONSUMER_FAMILIES = frozenset(card.family for card in CARDS if card.segment == "consumer")


def _card(gpu_model: str) -> Card | None:
    card = CARDS_BY_FAMILY.get(gpu_model.split("-")[0])
    return card if card is not None and gpu_model in card.models else None


def modeled_throughput(tflops: float, bandwidth_gbs: float, training: bool) -> float:
    """The model: one card of these specifications in reference-card equivalents."""
    e = efficiency()
    ref_tflops, ref_gbs = reference_specs()
    w = e.training_compute_share if training else e.inference_compute_share
    return 1 / (w / (tflops / ref_tflops) + (1 - w) / (bandwidth_gbs / ref_gbs))


def reference_specs() -> tuple[float, float]:
    reference = efficiency().reference_model
    return CARDS_BY_FAMILY[reference.split("-")[0]].specs(reference)


def _is_pcie(offer: Offer) -> bool:
    return (offer.gpu_variant or "").upper() == "PCIE"


def card_throughput(offer: Offer, training: bool) -> float | None:
    """One whole card of the offer in A100-80GB equivalents (None: a model the catalog does not
    know; every catalogued card has a figure)."""
    card = _card(offer.gpu_model)
    if card is None:
        return None
    tflops, gbs = card.specs(offer.gpu_model, pcie=_is_pcie(offer))
    return modeled_throughput(tflops, gbs, training)


def throughput_table() -> dict[tuple[str, str], tuple[float, float]]:
    """(gpu_model, board) -> (training, inference) for every catalogued card and board ("SXM"
    or the only board, and "PCIe" where the card has one): what docs/advisor.md tabulates."""
    out: dict[tuple[str, str], tuple[float, float]] = {}
    for card in CARDS:
        for model in card.models:
            boards = [("default", False)] + ([("PCIe", True)] if card.pcie_bf16_tflops else [])
            for board, pcie in boards:
                tflops, gbs = card.specs(model, pcie=pcie)
                out[(model, board)] = (modeled_throughput(tflops, gbs, True),
                                       modeled_throughput(tflops, gbs, False))
    return out


@dataclass(frozen=True)
class Link:
    """How the cards of one server are linked."""

    name: str          # "NVLink 900 GB/s", "PCIe", "unknown (assumed PCIe)"
    fast: bool         # NVLink of at least efficiency.toml's fast_link_gbs


def interconnect(offer: Offer) -> Link:
    """The link between the cards of one server of the offer: NVLink when the board is SXM/NVL
    and the card has NVLink (at the catalog's bandwidth), PCIe for PCIe boards and cards without
    NVLink (consumer cards), unknown (assumed PCIe-class) when the listing does not say."""
    card = _card(offer.gpu_model)
    variant = (offer.gpu_variant or "").upper()
    fast_gbs = efficiency().fast_link_gbs
    if card is None or card.nvlink_gbs is None or variant == "PCIE":
        why = "no NVLink" if card is not None and card.nvlink_gbs is None else "PCIe board"
        return Link(f"PCIe ({why})", False)
    if variant in ("SXM", "NVL"):
        gbs = card.nvlink_gbs
        cut = "" if gbs >= fast_gbs else f", below the {fast_gbs:g} GB/s of a fast link"
        return Link(f"NVLink {gbs:g} GB/s{cut}", gbs >= fast_gbs)
    return Link("unknown: the listing names no board, assumed PCIe-class", False)


def is_consumer(offer: Offer) -> bool:
    return offer.gpu_model.split("-")[0] in CONSUMER_FAMILIES


def model_parallel_efficiency(cards: int, link: Link, across_servers: bool = False) -> float:
    """Per-card efficiency of model parallelism over `cards` cards: within one server by the
    link (a slow link keeps slow_link_factor of the fast figure); across servers the cluster
    table (the next size up when `cards` is not in a table)."""
    e = efficiency()
    if across_servers:
        return step_value(e.across_servers_per_card, cards)
    fast = step_value(e.model_parallel_per_card, cards)
    return fast if link.fast else fast * e.slow_link_factor


def data_parallel_cards(cards: int) -> float:
    """Card-equivalents of work `cards` cards deliver when each holds the whole model: the
    speed-up of the next count up in the table, pro rata (the largest entry's, beyond it)."""
    if cards <= 1:
        return 1.0
    table = efficiency().data_parallel_speedup
    size = next((n for n in table if n >= cards), max(table))
    return table[size] * cards / size
