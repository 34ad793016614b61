"""Relative throughput and scaling: how much work one card of an offer does (in A100-80GB
equivalents), and what slicing, data parallelism, model parallelism and spot restarts cost.
Every figure is a documented rule of thumb (docs/advisor.md). The cards' own figures (throughput,
a PCIe board's share of it, the consumer segment) are the card catalog's, with their evidence
(spiders/parsing/card_catalog.csv); the rules of scaling are here."""

from __future__ import annotations

from pipelines.advisor.offers import Offer
from spiders.parsing.card_catalog import CARDS

# Relative throughput of one whole card, A100-80GB SXM = 1.0: (training, inference), per model.
THROUGHPUT = {model: figures for card in CARDS
              for model, figures in card.throughput_by_model().items()}
# PCIe boards of the datacentre cards run at lower power than SXM: applied when gpu_variant says
# PCIe, per family.
PCIE_FACTOR = {card.family: card.pcie_factor for card in CARDS if card.pcie_factor}
# A MIG/vGPU slice gets its share of the card, less a penalty for the memory bandwidth and
# caches it shares with the other tenants.
SLICE_EFFICIENCY = 0.75
# Data parallel (the model fits one card; more cards only go faster): each added card adds 0.95
# of a card (gradient all-reduce overhead): 8 cards = 1 + 7 × 0.95 = 7.65 cards of work.
DATA_PARALLEL_ADDED_CARD = 0.95
# Model parallel (the model does not fit one card; tensor/pipeline/FSDP sharding): each card
# works at this share of its single-card throughput. Base values for an unknown interconnect;
# NVLink (SXM/NVL boards) +0.05, PCIe (and consumer cards, which have no NVLink) -0.05. Beyond 8
# cards the job spans servers and the network dominates: no interconnect adjustment.
MODEL_PARALLEL_EFFICIENCY = {2: 0.75, 4: 0.70, 8: 0.65, 16: 0.55, 32: 0.50, 64: 0.45}
NVLINK_BONUS, PCIE_PENALTY = 0.05, 0.05
# H800 is the H100 with NVLink cut from 900 to 400 GB/s: no NVLink bonus.
REDUCED_NVLINK_MODELS = frozenset({"H800-80GB"})
# Consumer cards have no NVLink (the advisor sizes jobs only on cards with a throughput figure).
CONSUMER_MODELS = frozenset(model for card in CARDS if card.segment == "consumer"
                            for model in card.models)
MAX_CARDS = 64
# A spot instance can be reclaimed: checkpointing and restarting costs about 10 % more time.
SPOT_TIME_OVERHEAD = 1.10
def card_throughput(offer: Offer, training: bool) -> float | None:
    """One whole card of the offer in A100-80GB equivalents (None: a card without a figure)."""
    figures = THROUGHPUT.get(offer.gpu_model)
    if figures is None:
        return None
    value = figures[0] if training else figures[1]
    family = offer.gpu_model.split("-")[0]
    if (offer.gpu_variant or "").upper() == "PCIE" and family in PCIE_FACTOR:
        value *= PCIE_FACTOR[family]
    return value


def interconnect(offer: Offer) -> str:
    """"NVLink", "PCIe" or "unknown", from the card and what gpu_variant says."""
    variant = (offer.gpu_variant or "").upper()
    if offer.gpu_model in CONSUMER_MODELS or variant == "PCIE":
        return "PCIe"
    if variant in ("SXM", "NVL") and offer.gpu_model not in REDUCED_NVLINK_MODELS:
        return "NVLink"
    if offer.gpu_model in REDUCED_NVLINK_MODELS and variant == "SXM":
        return "NVLink (cut to 400 GB/s)"
    return "unknown"


def model_parallel_efficiency(cards: int, link: str) -> float:
    """Per-card efficiency of model parallelism over `cards` cards (the table's entry for the
    next size up when `cards` is not in it)."""
    size = next((n for n in sorted(MODEL_PARALLEL_EFFICIENCY) if n >= cards), MAX_CARDS)
    base = MODEL_PARALLEL_EFFICIENCY[size]
    if size <= 8:
        if link == "NVLink":
            base += NVLINK_BONUS
        elif link == "PCIe":
            base -= PCIE_PENALTY
    return base


def data_parallel_cards(cards: int) -> float:
    """Card-equivalents of work `cards` cards deliver when each holds the whole model."""
    return 1 + DATA_PARALLEL_ADDED_CARD * (cards - 1)
