"""The GPU cards the sources sell: one reviewed row per card family in card_catalog.csv.

Each family has the spelling that names it (a regex on NFKC, upper-case text with "-" and "_" read
as spaces), its memory sizes, which size an unqualified name means, MIG support, and the plausible
price per whole-GPU-hour in CNY with the evidence it comes from. A new card is a new row.
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

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(f"{self.family}-{gb}GB" for gb in self.memory_gb)


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
    return card


def load_cards(path: Path = _CSV) -> tuple[Card, ...]:
    """Catalog rows in file order (the order names are tried in: "4090D" before "4090")."""
    with path.open(encoding="utf-8", newline="") as f:
        return tuple(_card(row) for row in csv.DictReader(f))


CARDS = load_cards()
CARDS_BY_FAMILY = {card.family: card for card in CARDS}
