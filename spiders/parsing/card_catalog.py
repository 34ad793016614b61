"""The GPU cards the sources sell: one reviewed row per card family in card_catalog.csv.

Each family has the spelling that names it (a regex on NFKC, upper-case text with "-" and "_" read
as spaces), its segment (datacenter, workstation, consumer), its memory sizes, which size an
unqualified name means, MIG support, the plausible price per whole-GPU-hour in CNY with the
evidence it comes from, and, for the cards the advisor sizes jobs on, each memory size's relative
throughput (training, inference; A100-80GB SXM = 1.0) and its PCIe boards' share of it, with their
evidence (pipelines/advisor/throughput.py applies them). A new card is a new row.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
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
    # one whole card's (training, inference) throughput per memory size, in memory_gb's order
    # (A100-80GB SXM = 1.0); None: the card has no figure
    throughput: tuple[tuple[float, float], ...] | None = None
    pcie_factor: float | None = None    # a PCIe board's share of the SXM card's throughput
    throughput_evidence: str = ""       # where the throughput figures come from

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(f"{self.family}-{gb}GB" for gb in self.memory_gb)

    def throughput_by_model(self) -> dict[str, tuple[float, float]]:
        """gpu_model -> (training, inference) throughput of one whole card; {} without figures."""
        return dict(zip(self.models, self.throughput, strict=True)) if self.throughput else {}


def _throughput(row: dict[str, str], sizes: int) -> tuple[tuple[float, float], ...] | None:
    """The training and inference columns ("0.95|1.0"), one figure per memory size; both empty:
    no figure. Anything else (one column, a count that is not the sizes') is a bad row."""
    training, inference = (row.get(name) or "" for name in ("training_throughput",
                                                            "inference_throughput"))
    if not training and not inference:
        return None
    pairs = tuple(zip((float(v) for v in training.split("|")),
                      (float(v) for v in inference.split("|")), strict=True))
    if len(pairs) != sizes or not all(t > 0 and i > 0 for t, i in pairs):
        raise ValueError(f"card_catalog.csv: throughput of {row['family']} is not one positive "
                         "(training, inference) figure per memory size")
    return pairs


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
        high_cny=Decimal(row["high_cny"]), price_evidence=row["price_evidence"],
        throughput=_throughput(row, len(memory)),
        pcie_factor=float(row["pcie_factor"]) if row.get("pcie_factor") else None,
        throughput_evidence=row.get("throughput_evidence") or "")
    if (card.throughput or card.pcie_factor) and not card.throughput_evidence:
        raise ValueError(f"card_catalog.csv: throughput of {card.family} without its evidence")
    sizes = {card.default_gb, card.slice_default_gb} | ({card.nvl_gb} if card.nvl_gb else set())
    if not sizes <= set(memory) or "-" in card.family or not card.low_cny < card.high_cny:
        raise ValueError(f"card_catalog.csv: inconsistent row for {card.family}")
    return card


def load_cards(path: Path = _CSV) -> tuple[Card, ...]:
    """Catalog rows in file order (the order names are tried in: "4090D" before "4090")."""
    with path.open(encoding="utf-8", newline="") as f:
        return tuple(_card(row) for row in csv.DictReader(f))


CARDS = load_cards()
CARDS_BY_FAMILY = {card.family: card for card in CARDS}
