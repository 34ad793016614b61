"""Canonical GPU model, variant and slice fraction from a vendor's card name.

Only the tracked cards are accepted; anything else (V100, A800, L40S, ...) raises GpuParseError so
the offer lands in quarantine with a reason instead of being merged into the wrong card.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal


class GpuParseError(ValueError):
    """The text does not name exactly one tracked GPU (and slice); the message says why."""


CANONICAL_MODELS = ("A100-40GB", "A100-80GB", "H100-80GB", "H100-94GB", "H800-80GB",
                    "RTX4090-24GB", "RTX4090-48GB", "RTX4090D-24GB")
CARD_VRAM_GB = {m: Decimal(m.rsplit("-", 1)[1][:-2]) for m in CANONICAL_MODELS}


@dataclass(frozen=True)
class GpuSpec:
    gpu_model: str            # one of CANONICAL_MODELS
    gpu_variant: str | None   # "SXM" | "PCIe" | "NVL" | None when the text does not say
    gpu_fraction: Decimal     # 1 = whole card; 0.25 = a quarter slice (by memory)
    vram_gb: Decimal          # VRAM of the offer unit (whole card, or the slice)


# Family -> regex. 4090D is tried before 4090: it is a different (cut-down) card, never merged.
_FAMILIES = (
    ("RTX4090D", r"(?<![0-9])4090\s*D(?![A-Z])"),
    ("RTX4090", r"(?<![0-9])4090(?![0-9])(?!\s*D(?![A-Z]))"),
    ("A100", r"(?<![A-Z0-9])A\s?100(?![0-9])"),
    ("H100", r"(?<![A-Z0-9])H\s?100(?![0-9])"),
    ("H800", r"(?<![A-Z0-9])H\s?800(?![0-9])"),
)
_UNTRACKED_RE = re.compile(
    r"(?<![A-Z0-9])(A800|A40|A30|A16|A10G?|A2|H200|H20|GH200|GB200|B200|B100|L40S|L40|L20|L4|T4|"
    r"V100S?|P100|P40|K80|A6000|A5000|RTX\s?[56]000|5090|4080|4070|3090|3080|MI300X|MI250|910B)"
    r"(?![0-9A-Z])")
_CARD_SIZES = {"A100": (40, 80), "H100": (80, 94), "H800": (80,), "RTX4090": (24, 48),
               "RTX4090D": (24,)}
# No memory in the text: "Tesla A100" is the original 40 GB card; the H100 default is the 80 GB
# SXM/PCIe card (94 GB only as NVL); the 48 GB 4090 is a modded card that must say so.
_DEFAULT_CARD = {"A100": 40, "H100": 80, "H800": 80, "RTX4090": 24, "RTX4090D": 24}
# A vGPU slice named only by its own memory ("A100 20G切分") is cut from the big card: sellers
# slice the A100 80 GB (a 40 GB slice cannot come from a 40 GB card).
_SLICE_DEFAULT_CARD = {"A100": 80, "H100": 80, "H800": 80, "RTX4090": 24, "RTX4090D": 24}
# MIG carves memory into 8 slices; allowed memory slices per compute profile "Ng".
_MIG_MEM_EIGHTHS = {1: (1, 2), 2: (2,), 3: (4,), 4: (4,), 7: (8,)}
_MIG_RE = re.compile(r"(?<![0-9])([1-7])\s*G\s*\.\s*([0-9]+)\s*GB?(?![A-Z])")
# Any n/m is read, so that an unsupported one ("1/20") is refused instead of silently ignored.
_FRACTION_RE = re.compile(r"(?<![0-9.])([1-9][0-9]?)\s*/\s*([1-9][0-9]?)(?![0-9])")
_CN_FRACTIONS = {"半卡": (1, 2), "二分之一": (1, 2), "四分之一": (1, 4), "八分之一": (1, 8)}
_MEM_RE = re.compile(r"(?<![0-9.])([0-9]+(?:\.[0-9]+)?)\s*G(?:B|IB)?(?![A-Z])")
_SLICE_MARK = r"切分|切片|分片|SLICE|VGPU"
_VARIANTS = (("NVL", r"NVL"), ("SXM", r"SXM\s?[0-9]?"), ("PCIe", r"PCI\s?E"))


def gpu_family(gpu_model: str) -> str:
    """"A100-80GB" -> "A100"; "RTX4090D-24GB" -> "RTX4090D"."""
    if gpu_model not in CANONICAL_MODELS:
        raise GpuParseError(f"not a canonical GPU model: {gpu_model!r}")
    return gpu_model.rsplit("-", 1)[0]


def _snap(value: Decimal, family: str) -> int | None:
    """The card size within 10 % of `value` (48 for 47.5 GB / 49140 MiB), or None."""
    for size in _CARD_SIZES[family]:
        if abs(value - size) <= Decimal("0.1") * size:
            return size
    return None


def _one(found: set, what: str, text: str):
    if len(found) > 1:
        raise GpuParseError(f"several {what} ({', '.join(map(str, sorted(found)))}) in {text!r}")
    return next(iter(found)) if found else None


def _mig_eighths(g: int, mem: Decimal, card: int) -> int | None:
    exact = mem * 8 / card
    eighths = int(exact.to_integral_value())
    ok = abs(exact - eighths) <= Decimal("0.1") and eighths in _MIG_MEM_EIGHTHS[g]
    return eighths if ok else None


def _hint(value: Decimal | float | str | None) -> Decimal | None:
    """VRAM stated elsewhere in the listing: 80, 79.2, "80", "80GB", "81920 MiB" -> GB."""
    if value is None or value == "":
        return None
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(GB|G|GIB|MB|MIB)?\s*", str(value).upper())
    if m is None or isinstance(value, bool):
        raise GpuParseError(f"VRAM hint is not a memory size: {value!r}")
    return Decimal(m.group(1)) / (1024 if m.group(2) in ("MB", "MIB") else 1)


def parse_gpu(text: str, vram_gb_hint: Decimal | float | str | None = None) -> GpuSpec:
    """Vendor card text ("A100-SXM4-80GB", "RTX 4090D", "A100 80GB MIG 3g.40gb") -> GpuSpec.

    `vram_gb_hint` is VRAM the listing states elsewhere: read as the card's memory when it is a
    card size of the family (within 10 %), else as the slice's memory; a contradiction raises.
    """
    s = re.sub(r"[_\-]+", " ", unicodedata.normalize("NFKC", text or "")).upper()
    families = {name for name, pat in _FAMILIES if re.search(pat, s)}
    untracked = {m.group(1) for m in _UNTRACKED_RE.finditer(s)}
    if untracked:
        raise GpuParseError(f"untracked GPU model {', '.join(sorted(untracked))} in {text!r}")
    family = _one(families, "GPU models", text)
    if family is None:
        raise GpuParseError(f"unknown or untracked GPU model in {text!r}")
    variant = _one({v for v, pat in _VARIANTS if re.search(pat, s)}, "variants", text)
    hint = _hint(vram_gb_hint)
    mig = _one({(int(g), Decimal(mem)) for g, mem in _MIG_RE.findall(s)}, "MIG profiles", text)
    if mig and family.startswith("RTX"):
        raise GpuParseError(f"MIG profile on a GPU without MIG in {text!r}")
    s = _MIG_RE.sub(" ", s)
    fracs = {(int(n), int(d)) for n, d in _FRACTION_RE.findall(s)}
    fracs |= {f for word, f in _CN_FRACTIONS.items() if word in s}
    frac = _one(fracs, "fractions", text)
    if frac and (frac[0] >= frac[1] or frac[1] not in (2, 4, 8)):
        raise GpuParseError(f"unsupported slice fraction {frac[0]}/{frac[1]} in {text!r}")
    s = _FRACTION_RE.sub(" ", s)
    card_mem, slice_mem = set(), set()
    for m in _MEM_RE.finditer(s):
        value = Decimal(m.group(1))
        # "20G切分" / "20GB slice" name the slice after it, "vGPU 10GB" before it
        marked = re.match(r"\s*(?:切分|切片|分片|SLICE)", s[m.end():]) or re.search(
            rf"(?:{_SLICE_MARK})\s*$", s[:m.start()])
        size = _snap(value, family)
        if marked or (size is None and (frac or re.search(_SLICE_MARK, s))):
            slice_mem.add(value)
        elif size is None:
            raise GpuParseError(f"{value} GB is not a {family} memory size in {text!r}")
        else:
            card_mem.add(size)
    card = _one(card_mem, "card memory sizes", text)
    slice_gb = _one(slice_mem, "slice memory sizes", text)
    hint_card = _snap(hint, family) if hint is not None else None
    if card is None:
        if family == "H100" and variant == "NVL":
            card = 94
        elif hint_card is not None and not (slice_gb is not None and hint == slice_gb):
            card = hint_card
        elif mig:
            fits = {c for c in _CARD_SIZES[family] if _mig_eighths(*mig, c)}
            card = _one(fits, f"{family} sizes fitting MIG {mig[0]}g.{mig[1]}gb", text)
            if card is None:
                raise GpuParseError(f"MIG {mig[0]}g.{mig[1]}gb fits no {family} in {text!r}")
        elif slice_gb is not None and frac:
            card = _snap(slice_gb * frac[1] / frac[0], family)
            if card is None:
                raise GpuParseError(
                    f"{slice_gb} GB as {frac[0]}/{frac[1]} fits no {family} in {text!r}")
        elif slice_gb is not None:
            card = _SLICE_DEFAULT_CARD[family]
        elif hint is not None and frac:   # "A100 1/4" with the slice's 20 GB as hint
            card = _snap(hint * frac[1] / frac[0], family) or _DEFAULT_CARD[family]
        else:
            card = _DEFAULT_CARD[family]
    model = f"{family}-{card}GB"
    if model not in CANONICAL_MODELS:
        raise GpuParseError(f"untracked GPU model {model} in {text!r}")
    if mig:
        eighths = _mig_eighths(*mig, card)
        if eighths is None:
            raise GpuParseError(f"MIG {mig[0]}g.{mig[1]}gb does not fit {model} in {text!r}")
        fraction, vram = Decimal(eighths) / 8, mig[1]
    elif frac:
        fraction, vram = Decimal(frac[0]) / frac[1], Decimal(card) * frac[0] / frac[1]
        if slice_gb is not None and _snap_slice(slice_gb, vram) is None:
            raise GpuParseError(f"{slice_gb} GB is not {frac[0]}/{frac[1]} of {model} in {text!r}")
    elif slice_gb is not None:
        if slice_gb >= card:
            raise GpuParseError(f"slice of {slice_gb} GB is not smaller than {model} in {text!r}")
        fraction, vram = slice_gb / card, slice_gb
    else:
        fraction, vram = Decimal(1), Decimal(card)
    if hint is not None and hint_card != card and _snap_slice(hint, vram) is None:
        raise GpuParseError(f"VRAM hint {hint} GB contradicts {model} ({vram} GB offered) "
                            f"in {text!r}")
    return GpuSpec(model, variant, fraction, Decimal(vram))


def _snap_slice(value: Decimal, vram: Decimal) -> Decimal | None:
    return vram if abs(value - vram) <= Decimal("0.1") * vram else None
