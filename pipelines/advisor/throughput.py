"""Relative throughput and scaling: how much work one card of an offer does (in A100-80GB
equivalents), and what slicing, data parallelism, model parallelism and spot restarts cost.
Every figure is a documented rule of thumb (docs/advisor.md)."""

from __future__ import annotations

from pipelines.advisor.offers import Offer

# Relative throughput of one whole card, A100-80GB SXM = 1.0: (training, inference).
# Training follows dense bf16 tensor throughput as achieved in practice (not the 3.2x peak ratio
# of H100 to A100); inference is mostly memory-bandwidth bound, hence the 4090's better showing.
THROUGHPUT = {
    "A100-80GB": (1.0, 1.0),
    "A100-40GB": (0.95, 0.8),      # the same chip with 1.6 instead of 2.0 TB/s
    "H100-80GB": (2.5, 2.0),
    "H100-94GB": (2.3, 2.4),       # H100 NVL: PCIe-class clocks, 3.9 TB/s memory
    "H800-80GB": (2.5, 2.0),       # H100 compute; only its NVLink is cut (see scaling)
    "RTX4090-24GB": (0.55, 0.8),
    "RTX4090-48GB": (0.55, 0.8),   # the same chip with modded memory
    "RTX4090D-24GB": (0.5, 0.7),   # 114 of the 4090's 128 SMs
}
# PCIe boards of the datacentre cards run at lower power than SXM (A100 300 W vs 400 W; H100
# PCIe 756 vs 989 TFLOPS, 2.0 vs 3.35 TB/s): applied when gpu_variant says PCIe.
PCIE_FACTOR = {"A100": 0.9, "H100": 0.75, "H800": 0.75}
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
CONSUMER_MODELS = frozenset({"RTX4090-24GB", "RTX4090-48GB", "RTX4090D-24GB"})
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
