"""The slice or card count an API states as numbers apart from the card text, read by
normalization (pipelines/normalize/offer.py) and never by a spider.

Two forms are served:

* a fraction of one card (Tencent's GpuCount 0.25: a quarter of a T4), the item's typed
  `gpu_fraction`;
* the GPU memory of the whole offer (Vultr's gpu_vram_gb: 4 GB of an A100 is a vGPU slice, 96 GB
  of L40S is two cards), the item's typed `plan_vram` with `plan_vram_unit`. Below the card's
  memory it is a slice of the card a slice is cut from (card_catalog.csv slice_default_gb); a
  multiple of that memory is that many whole cards; any other figure says no count and is the
  card's memory hint, which parse_gpu reads or refuses.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import NamedTuple

from spiders.parsing.card_catalog import CARDS_BY_FAMILY
from spiders.parsing.gpu_models import GpuParseError, gpu_family, parse_gpu, vram_gb_of


class PlanGpus(NamedTuple):
    count: int | None          # whole cards; 1 for a slice; None when the memory says none
    slice_gb: Decimal | None   # the slice's memory on a slice
    vram_gb_hint: Decimal | None


def served_fraction(value: object) -> tuple[int, int]:
    """A served fraction of one card (0.25, "0.5") as (numerator, denominator), the nearest in
    eighths; parse_gpu refuses one it does not know (not below 1, not in halves/quarters/eighths).
    """
    try:
        frac = Fraction(Decimal(str(value).strip())).limit_denominator(8)
    except (InvalidOperation, ValueError) as exc:
        raise GpuParseError(f"gpu_fraction is not a number: {value!r}") from exc
    return frac.numerator, frac.denominator


def plan_gpus(gpu_text: str, plan_vram: object, unit: str) -> PlanGpus:
    """The cards or slice the offer's whole GPU memory (`plan_vram` in `unit`) buys of the card
    `gpu_text` names (see the module docstring); a card the catalog does not know goes on as one
    card with the memory as its hint, for parse_gpu to say why it cannot be read."""
    memory = vram_gb_of(plan_vram, unit)
    try:
        full = Decimal(CARDS_BY_FAMILY[gpu_family(parse_gpu(gpu_text).gpu_model)]
                       .slice_default_gb)
    except GpuParseError:
        return PlanGpus(1, None, memory)
    if memory < full:
        return PlanGpus(1, memory, memory)
    if memory % full == 0:
        return PlanGpus(int(memory // full), None, full)
    return PlanGpus(None, None, memory)
