"""Canonical GPU model, variant, interconnect and slice fraction from a vendor's card name.

Every card of `card_catalog.csv` is read (A100 ... MI300X); text that names no catalogued card, or
several, raises GpuParseError so the offer lands in quarantine with a reason ("could not read"),
instead of being merged into the wrong card.

Form factor and interconnect are not variants: "NVLink" and "NVSwitch" say how cards are linked
(`interconnect`), "NVL" alone is the H100/H200 NVL card; HGX and DGX boards carry SXM modules.
A slice is resolved against the card's full memory: "A100 80G 切分 40G" and "40GB of an 80GB
A100" are half an A100-80GB (fraction 0.5), never an A100-40GB card.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal

from spiders.parsing.card_catalog import CARDS, CARDS_BY_FAMILY, Card


class GpuParseError(ValueError):
    """The text does not name exactly one catalogued GPU (and slice); the message says why."""


CANONICAL_MODELS = tuple(model for card in CARDS for model in card.models)
CARD_VRAM_GB = {m: Decimal(m.rsplit("-", 1)[1][:-2]) for m in CANONICAL_MODELS}


@dataclass(frozen=True)
class GpuSpec:
    gpu_model: str            # one of CANONICAL_MODELS
    gpu_variant: str | None   # "SXM" | "PCIe" | "NVL" | None when the text does not say
    gpu_fraction: Decimal     # 1 = whole card; 0.25 = a quarter slice (by memory)
    vram_gb: Decimal          # VRAM of the offer unit (whole card, or the slice)
    interconnect: str | None = None   # "NVLink" | "NVSwitch" | None: how cards are linked


# One alternation in catalog order, scanned left to right: at "RTX 4090 D" the 4090D spelling is
# tried (and consumed) before the 4090 one.
_NAMES_RE = re.compile("|".join(f"(?P<{c.family}>{c.pattern.pattern})" for c in CARDS))
# HGX/DGX baseboards take SXM modules; "NVL" followed by a letter is NVLink, not the NVL card.
_VARIANTS = (("NVL", r"NVL(?![A-Z0-9])"), ("SXM", r"SXM\s?[0-9]?|[HD]GX"), ("PCIe", r"PCI\s?E"))
_INTERCONNECTS = (("NVSwitch", r"NVSWITCH"), ("NVLink", r"NVLINK"))
# MIG memory slices (in eighths of the card) allowed per compute profile "Ng", by the number of
# compute slices: 7 on A100/H100-class cards, 4 on the A30.
_MIG_MEM_EIGHTHS = {7: {1: (1, 2), 2: (2,), 3: (4,), 4: (4,), 7: (8,)},
                    4: {1: (2,), 2: (4,), 4: (8,)}}
_MIG_RE = re.compile(r"(?<![0-9])([1-7])\s*G\s*\.\s*([0-9]+)\s*GB?(?![A-Z])")
# Any n/m is read, so that an unsupported one ("1/20") is refused instead of silently ignored.
_FRACTION_RE = re.compile(r"(?<![0-9.])([1-9][0-9]?)\s*/\s*([1-9][0-9]?)(?![0-9])")
_CN_FRACTIONS = {"半卡": (1, 2), "二分之一": (1, 2), "四分之一": (1, 4), "八分之一": (1, 8)}
_DECIMAL_CARD_RE = re.compile(r"(?<![0-9.])(0\.[0-9]+)\s*(?:卡|CARD|GPU)")
_DECIMAL_FRACTIONS = {Decimal("0.5"): (1, 2), Decimal("0.25"): (1, 4), Decimal("0.125"): (1, 8)}
_GB = r"([0-9]+(?:\.[0-9]+)?)\s*G(?:B|IB)?"
# "40GB of an 80GB card" names the slice first; "80G卡的40G" / "80G中的40G" the card first.
_SHARE_OF_RE = re.compile(rf"(?<![0-9.]){_GB}\s*OF\s+(?:AN?\s+)?(?:[A-Z0-9 ]*?\s)?{_GB}(?![A-Z])")
_SHARE_CN_RE = re.compile(rf"(?<![0-9.]){_GB}\s*(?:卡|显卡)?\s*(?:中)?的\s*{_GB}(?![A-Z])")
# Not GPU memory: bandwidth ("600GB/s") and host memory or disk in a configuration cell.
_MEM_RE = re.compile(rf"(?<![0-9.]){_GB}(?![A-Z])(?!\s*/\s*S)")
_HOST_BEFORE = re.compile(
    r"(?:内存|RAM|MEMORY|MEM|硬盘|系统盘|数据盘|SSD|NVME|DISK|存储)\s*[:：]?\s*$")
_HOST_AFTER = re.compile(r"\s*(?:内存|RAM|SSD|NVME|DISK|硬盘|系统盘|数据盘)")
_SLICE_MARK = r"切分|切片|分片|SLICE|VGPU"


def gpu_family(gpu_model: str) -> str:
    """"A100-80GB" -> "A100"; "RTX4090D-24GB" -> "RTX4090D"."""
    if gpu_model not in CANONICAL_MODELS:
        raise GpuParseError(f"not a canonical GPU model: {gpu_model!r}")
    return gpu_model.rsplit("-", 1)[0]


def _snap(value: Decimal, card: Card) -> int | None:
    """The nearest card size within 10 % of `value` (48 for 47.5 GB / 49140 MiB), or None."""
    near = [size for size in card.memory_gb if abs(value - size) <= Decimal("0.1") * size]
    return min(near, key=lambda size: abs(value - size)) if near else None


def _one(found: set, what: str, text: str):
    if len(found) > 1:
        raise GpuParseError(f"several {what} ({', '.join(map(str, sorted(found)))}) in {text!r}")
    return next(iter(found)) if found else None


def _mig_eighths(g: int, mem: Decimal, size: int, card: Card) -> int | None:
    exact = mem * 8 / size
    eighths = int(exact.to_integral_value())
    allowed = _MIG_MEM_EIGHTHS[card.mig_slices].get(g, ())
    return eighths if abs(exact - eighths) <= Decimal("0.1") and eighths in allowed else None


def _hint(value: Decimal | float | str | None) -> Decimal | None:
    """VRAM stated elsewhere in the listing: 80, 79.2, "80", "80GB", "81920 MiB" -> GB."""
    if value is None or value == "":
        return None
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(GB|G|GIB|MB|MIB)?\s*", str(value).upper())
    if m is None or isinstance(value, bool):
        raise GpuParseError(f"VRAM hint is not a memory size: {value!r}")
    return Decimal(m.group(1)) / (1024 if m.group(2) in ("MB", "MIB") else 1)


def _card(s: str, text: str) -> Card:
    families = {m.lastgroup for m in _NAMES_RE.finditer(s)}
    family = _one(families, "GPU models", text)
    if family is None:
        raise GpuParseError(f"unknown GPU model (not in card_catalog.csv) in {text!r}")
    return CARDS_BY_FAMILY[family]


def _fraction(s: str, text: str) -> tuple[tuple[int, int] | None, str]:
    """The slice written as a fraction ("1/4", "半卡", "0.5 卡"), and the text without it."""
    fracs = {(int(n), int(d)) for n, d in _FRACTION_RE.findall(s)}
    fracs |= {f for word, f in _CN_FRACTIONS.items() if word in s}
    for value in _DECIMAL_CARD_RE.findall(s):
        if Decimal(value) not in _DECIMAL_FRACTIONS:
            raise GpuParseError(f"unsupported slice fraction {value} card in {text!r}")
        fracs.add(_DECIMAL_FRACTIONS[Decimal(value)])
    frac = _one(fracs, "fractions", text)
    if frac and (frac[0] >= frac[1] or frac[1] not in (2, 4, 8)):
        raise GpuParseError(f"unsupported slice fraction {frac[0]}/{frac[1]} in {text!r}")
    return frac, _DECIMAL_CARD_RE.sub(" ", _FRACTION_RE.sub(" ", s))


def _memories(s: str, card: Card, frac, text: str) -> tuple[set[int], set[Decimal]]:
    """Card sizes and slice sizes written in the text."""
    card_mem: set[int] = set()
    slice_mem: set[Decimal] = set()
    for regex, slice_first in ((_SHARE_OF_RE, True), (_SHARE_CN_RE, False)):
        for m in regex.finditer(s):
            part, whole = (m.group(1), m.group(2)) if slice_first else (m.group(2), m.group(1))
            size = _snap(Decimal(whole), card)
            if size is None:
                raise GpuParseError(f"{whole} GB is not a {card.family} memory size in {text!r}")
            card_mem.add(size)
            slice_mem.add(Decimal(part))
        s = regex.sub(" ", s)
    for m in _MEM_RE.finditer(s):
        if _HOST_BEFORE.search(s[:m.start()]) or _HOST_AFTER.match(s[m.end():]):
            continue
        value = Decimal(m.group(1))
        # "20G切分" / "20GB slice" name the slice after it, "vGPU 10GB" / "切分 40G" before it
        # ... but in "80G 切分 40G" the mark belongs to the 40 GB after it
        marked = re.match(r"\s*(?:切分|切片|分片|SLICE)(?!\s*[0-9])", s[m.end():]) or re.search(
            rf"(?:{_SLICE_MARK})\s*$", s[:m.start()])
        size = _snap(value, card)
        if marked or (size is None and (frac or re.search(_SLICE_MARK, s))):
            slice_mem.add(value)
        elif size is None:
            raise GpuParseError(f"{value} GB is not a {card.family} memory size in {text!r}")
        else:
            card_mem.add(size)
    return card_mem, slice_mem


def parse_gpu(text: str, vram_gb_hint: Decimal | float | str | None = None) -> GpuSpec:
    """Vendor card text ("A100-SXM4-80GB", "RTX 4090D", "A100 80GB MIG 3g.40gb") -> GpuSpec.

    `vram_gb_hint` is VRAM the listing states elsewhere: read as the card's memory when it is a
    card size of the family (within 10 %), else as the slice's memory; a contradiction raises.
    """
    s = re.sub(r"[_\-]+", " ", unicodedata.normalize("NFKC", text or "")).upper()
    card = _card(s, text)
    s = _NAMES_RE.sub(" ", s)   # "A10G" names a card, not 10 GB
    variant = _one({v for v, pat in _VARIANTS if re.search(pat, s)}, "variants", text)
    interconnect = next((name for name, pat in _INTERCONNECTS if re.search(pat, s)), None)
    hint = _hint(vram_gb_hint)
    mig = _one({(int(g), Decimal(mem)) for g, mem in _MIG_RE.findall(s)}, "MIG profiles", text)
    if mig and card.mig_slices is None:
        raise GpuParseError(f"MIG profile on a GPU without MIG in {text!r}")
    frac, s = _fraction(_MIG_RE.sub(" ", s), text)
    card_mem, slice_mem = _memories(s, card, frac, text)
    size = _one(card_mem, "card memory sizes", text)
    slice_gb = _one(slice_mem, "slice memory sizes", text)
    hint_size = _snap(hint, card) if hint is not None else None
    if size is None:
        size = _size_from_context(card, variant, hint, hint_size, mig, frac, slice_gb, text)
    model = f"{card.family}-{size}GB"
    if mig:
        eighths = _mig_eighths(*mig, size, card)
        if eighths is None:
            raise GpuParseError(f"MIG {mig[0]}g.{mig[1]}gb does not fit {model} in {text!r}")
        fraction, vram = Decimal(eighths) / 8, mig[1]
    elif frac:
        fraction, vram = Decimal(frac[0]) / frac[1], Decimal(size) * frac[0] / frac[1]
        if slice_gb is not None and _snap_slice(slice_gb, vram) is None:
            raise GpuParseError(f"{slice_gb} GB is not {frac[0]}/{frac[1]} of {model} in {text!r}")
    elif slice_gb is not None:
        if slice_gb >= size:
            raise GpuParseError(f"slice of {slice_gb} GB is not smaller than {model} in {text!r}")
        fraction, vram = slice_gb / size, slice_gb
    else:
        fraction, vram = Decimal(1), Decimal(size)
    if hint is not None and hint_size != size and _snap_slice(hint, vram) is None:
        raise GpuParseError(f"VRAM hint {hint} GB contradicts {model} ({vram} GB offered) "
                            f"in {text!r}")
    return GpuSpec(model, variant, fraction, Decimal(vram), interconnect)


def _size_from_context(card: Card, variant, hint, hint_size, mig, frac, slice_gb,
                       text: str) -> int:
    """The card's memory when the text names none: NVL card, hint, MIG profile, slice, default."""
    if variant == "NVL" and card.nvl_gb:
        return card.nvl_gb
    if hint_size is not None and not (slice_gb is not None and hint == slice_gb):
        return hint_size
    if mig:
        fits = {size for size in card.memory_gb if _mig_eighths(*mig, size, card)}
        size = _one(fits, f"{card.family} sizes fitting MIG {mig[0]}g.{mig[1]}gb", text)
        if size is None:
            raise GpuParseError(f"MIG {mig[0]}g.{mig[1]}gb fits no {card.family} in {text!r}")
        return size
    if slice_gb is not None and frac:
        size = _snap(slice_gb * frac[1] / frac[0], card)
        if size is None:
            raise GpuParseError(
                f"{slice_gb} GB as {frac[0]}/{frac[1]} fits no {card.family} in {text!r}")
        return size
    if slice_gb is not None:
        # a vGPU slice named only by its own memory ("A100 20G切分") is cut from the big card
        return card.slice_default_gb
    if hint is not None and frac:   # "A100 1/4" with the slice's 20 GB as hint
        return _snap(hint * frac[1] / frac[0], card) or card.default_gb
    return card.default_gb


def _snap_slice(value: Decimal, vram: Decimal) -> Decimal | None:
    return vram if abs(value - vram) <= Decimal("0.1") * vram else None
