"""The GPU cards the sources sell: one reviewed row per card family in card_catalog.csv.

Each family has the spelling that names it (a regex on NFKC, upper-case text with "-" and "_" read
as spaces), its segment (datacenter, workstation, consumer), its memory sizes, which size an
unqualified name means, MIG support, the plausible price per whole-GPU-hour in CNY with the
evidence it comes from, and its public specifications per memory size: dense BF16/FP16 tensor
TFLOPS and memory bandwidth (of the SXM/default board and of its PCIe board), the NVLink bandwidth
of its SXM boards, with their evidence. Every row has specifications: the advisor derives every
card's throughput from them with one model (pipelines/advisor/throughput.py). A new card is a new
row.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path

_CSV = Path(__file__).with_name("card_catalog.csv")

# The focus of signals, claims and the report (DESIGN.md rule 8); every other card is still kept.
MISSION_FAMILIES = ("A100", "H100", "H800", "RTX4090")


@dataclass(frozen=True)
class Card:
    family: str                   # "A100", "RTX4090D", "MI300X": the part of gpu_model before "-"
    maker: str                    # NVIDIA | AMD
    segment: str                  # datacenter | workstation | consumer
    pattern: re.Pattern           # the spelling, with word boundaries
    memory_gb: tuple[int, ...]    # every memory size the card ships with
    default_gb: int               # the card a name without memory means ("Tesla A100": 40 GB)
    slice_default_gb: int         # the card a slice named only by its memory is cut from
    nvl_gb: int | None            # memory of the NVL card (H100 NVL: 94 GB), None if no NVL
    mig_slices: int | None        # MIG compute slices: 7 (A100/H100-class), 4 (A30), None
    typical_cny: Decimal          # a typical on-demand price per GPU-hour (from price_evidence)
    low_cny: Decimal              # plausible bounds per whole-GPU-hour
    high_cny: Decimal
    price_evidence: str           # where the typical price and the bounds come from
    # public specifications, one figure per memory size (memory_gb's order): dense BF16/FP16
    # tensor TFLOPS with FP32 accumulate (the vector FP32/FP16 rate for cards without tensor
    # cores) and memory bandwidth in GB/s, of the SXM (or only) board and of the PCIe board
    bf16_tflops: tuple[float, ...] = ()
    bandwidth_gbs: tuple[float, ...] = ()
    pcie_bf16_tflops: tuple[float, ...] | None = None    # None: no separate PCIe board
    pcie_bandwidth_gbs: tuple[float, ...] | None = None
    nvlink_gbs: float | None = None     # NVLink per GPU of SXM boards; None: none or a bridge
    spec_evidence: str = ""             # where the specifications come from

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(f"{self.family}-{gb}GB" for gb in self.memory_gb)

    def specs(self, gpu_model: str, pcie: bool = False) -> tuple[float, float]:
        """(dense BF16 TFLOPS, memory GB/s) of one card of `gpu_model`, of its PCIe board when
        `pcie` and the card has one."""
        i = self.models.index(gpu_model)
        if pcie and self.pcie_bf16_tflops and self.pcie_bandwidth_gbs:
            return self.pcie_bf16_tflops[i], self.pcie_bandwidth_gbs[i]
        return self.bf16_tflops[i], self.bandwidth_gbs[i]


def _per_size(row: dict[str, str], column: str, sizes: int,
              required: bool = True) -> tuple[float, ...] | None:
    """A specification column: one positive figure per memory size ("1555|2039"), or one figure
    for every size ("312"). Empty: None where the column is optional; else a bad row."""
    text = (row.get(column) or "").strip()
    if not text:
        if required:
            raise ValueError(f"card_catalog.csv: {row['family']} has no {column}")
        return None
    try:
        figures = tuple(float(v) for v in text.split("|"))
    except ValueError:
        raise ValueError(f"card_catalog.csv: {column} of {row['family']} is not a number: "
                         f"{text!r}") from None
    if len(figures) == 1:
        figures *= sizes
    if len(figures) != sizes or not all(0 < f < 1e6 for f in figures):
        raise ValueError(f"card_catalog.csv: {column} of {row['family']} is not one positive "
                         "figure per memory size")
    return figures


def _card(row: dict[str, str]) -> Card:
    memory = tuple(int(gb) for gb in row["memory_gb"].split("|"))
    card = Card(
        family=row["family"], maker=row["maker"], segment=row["segment"],
        # not glued to another name: "A100" is not in "GA100X", "H20" not in "H200" or "GH20"
        pattern=re.compile(rf"(?<![A-Z0-9])(?:{row['pattern']})(?![A-Z0-9])"),
        memory_gb=memory, default_gb=int(row["default_gb"]),
        slice_default_gb=int(row["slice_default_gb"]),
        nvl_gb=int(row["nvl_gb"]) if row["nvl_gb"] else None,
        mig_slices=int(row["mig_slices"]) if row["mig_slices"] else None,
        typical_cny=Decimal(row["typical_cny"]), low_cny=Decimal(row["low_cny"]),
        high_cny=Decimal(row["high_cny"]), price_evidence=row["price_evidence"])
    sizes = {card.default_gb, card.slice_default_gb} | ({card.nvl_gb} if card.nvl_gb else set())
    if not sizes <= set(memory) or "-" in card.family or not card.low_cny < card.high_cny:
        raise ValueError(f"card_catalog.csv: inconsistent row for {card.family}")
    return _with_specs(card, row)


def _with_specs(card: Card, row: dict[str, str]) -> Card:
    """The card with its specifications, each checked: every row has them, with evidence."""
    sizes = len(card.memory_gb)
    card = replace(
        card, bf16_tflops=_per_size(row, "bf16_tflops", sizes),
        bandwidth_gbs=_per_size(row, "bandwidth_gbs", sizes),
        pcie_bf16_tflops=_per_size(row, "pcie_bf16_tflops", sizes, required=False),
        pcie_bandwidth_gbs=_per_size(row, "pcie_bandwidth_gbs", sizes, required=False),
        nvlink_gbs=float(row["nvlink_gbs"]) if row.get("nvlink_gbs") else None,
        spec_evidence=(row.get("spec_evidence") or "").strip())
    if not card.spec_evidence:
        raise ValueError(f"card_catalog.csv: specifications of {card.family} without evidence")
    if (card.pcie_bf16_tflops is None) != (card.pcie_bandwidth_gbs is None):
        raise ValueError(f"card_catalog.csv: {card.family}'s PCIe board needs both its TFLOPS "
                         "and its bandwidth")
    return card


def load_cards(path: Path = _CSV) -> tuple[Card, ...]:
    """Catalog rows in file order (the order names are tried in: "4090D" before "4090")."""
    with path.open(encoding="utf-8", newline="") as f:
        return tuple(_card(row) for row in csv.DictReader(f))


CARDS = load_cards()
CARDS_BY_FAMILY = {card.family: card for card in CARDS}
