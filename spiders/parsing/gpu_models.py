"""Canonical GPU model, variant, interconnect and slice fraction from a vendor's card name.

Every card of `card_catalog.csv` is read (A100 ... MI300X); text that names no catalogued card, or
several, raises GpuParseError so the offer lands in quarantine with a reason ("could not read"),
instead of being merged into the wrong card.

Form factor and interconnect are not variants: "NVLink" and "NVSwitch" say how cards are linked
(`interconnect`), "NVL" alone is the H100/H200 NVL card; HGX and DGX boards carry SXM modules.
A slice is resolved against the card's full memory: "A100 80G 切分 40G", "40G/80G" and "40GB of
an 80GB A100" are half an A100-80GB (fraction 0.5), never an A100-40GB card.

A memory figure on a slice row (1/2, 半卡, 0.5卡, a MIG profile, 切分, vGPU) is the slice's memory,
wherever the table gives it: a memory column (the hint), or the card text after the fraction
("A100 1/2 40G"; before it, "A100 80G 1/2", the card's). So "A100 1/2" with 40 GB and "A100 1/4"
with 20 GB are both slices of an A100-80GB. It may restate a memory the row already fixes (the
card's, or the slice's); a figure that fits no reading raises, never read as another card.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

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
# "20G/80G": the slice's memory over the card's
_SHARE_SLASH_RE = re.compile(rf"(?<![0-9.]){_GB}\s*/\s*{_GB}(?![A-Z])")
_SHARE_FORMS = ((_SHARE_OF_RE, True), (_SHARE_CN_RE, False), (_SHARE_SLASH_RE, True))
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


_VRAM_UNIT = r"(GIB|GB|G|MIB|MB)"


def memory_unit(header: str) -> str:
    """The memory unit a column header names ("显存(MiB)" -> "MIB", "显存（GB/卡）" -> "GB"),
    or "" ("显存（单卡）"): a bare number under it is read in that unit."""
    upper = unicodedata.normalize("NFKC", header).upper()
    m = re.search(rf"(?<![A-Z]){_VRAM_UNIT}(?![A-Z])", upper)
    return m.group(1) if m else ""


def _hint(value: Decimal | float | str | None) -> Decimal | None:
    """VRAM stated elsewhere in the listing: 80, 79.2, "80", "80GB", "81920 MiB" -> GB."""
    if value is None or value == "":
        return None
    m = re.fullmatch(rf"\s*([0-9]+(?:\.[0-9]+)?)\s*{_VRAM_UNIT}?\s*", str(value).upper())
    if m is None or isinstance(value, bool) or not Decimal(m.group(1)):
        raise GpuParseError(f"VRAM hint is not a memory size: {value!r}")
    return Decimal(m.group(1)) / (VRAM_UNITS["MiB"] if m.group(2) in ("MB", "MIB") else 1)


# The memory units a typed vram field is served in -> GB; GPU memory is binary (81920 MiB is 80 GB).
VRAM_UNITS = {"GB": Decimal(1), "GiB": Decimal(1), "MB": Decimal(1024), "MiB": Decimal(1024)}


def vram_gb_of(value: object, unit: str) -> Decimal:
    """A typed vram as served, in GB: `vram_gb_of(49140, "MB") == 47.98828125`."""
    if unit not in VRAM_UNITS:
        raise GpuParseError(f"unknown vram_unit {unit!r} (known: {', '.join(VRAM_UNITS)})")
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise GpuParseError(f"vram {value!r} is not a number of {unit}")
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation as exc:
        raise GpuParseError(f"vram {value!r} is not a number of {unit}") from exc
    if not number.is_finite() or number <= 0:
        raise GpuParseError(f"vram {value!r} is not a positive number of {unit}")
    return number / VRAM_UNITS[unit]


def _blank(m: re.Match) -> str:
    """A match replaced by as many spaces, so that later positions in the text still hold."""
    return " " * len(m.group())


def _card(s: str, text: str) -> tuple[Card, int]:
    """The one catalogued card the text names, and where its (first) name ends."""
    names = list(_NAMES_RE.finditer(s))
    family = _one({m.lastgroup for m in names}, "GPU models", text)
    if family is None:
        raise GpuParseError(f"unknown GPU model (not in card_catalog.csv) in {text!r}")
    return CARDS_BY_FAMILY[family], names[0].end()


def _fraction(s: str, text: str, stated: tuple[int, int] | None
              ) -> tuple[tuple[int, int] | None, list[int], str]:
    """The slice written as a fraction ("1/4", "半卡", "0.5 卡") or `stated` apart from the text
    (an API's served fraction), where it is written (-1: not in the text), and the text without
    it."""
    marks = [(m.start(), (int(m[1]), int(m[2]))) for m in _FRACTION_RE.finditer(s)]
    marks += [(-1, stated)] if stated else []
    marks += [(m.start(), f) for word, f in _CN_FRACTIONS.items() for m in re.finditer(word, s)]
    for m in _DECIMAL_CARD_RE.finditer(s):
        if Decimal(m[1]) not in _DECIMAL_FRACTIONS:
            raise GpuParseError(f"unsupported slice fraction {m[1]} card in {text!r}")
        marks.append((m.start(), _DECIMAL_FRACTIONS[Decimal(m[1])]))
    frac = _one({f for _, f in marks}, "fractions", text)
    if frac and (frac[0] >= frac[1] or frac[1] not in (2, 4, 8)):
        raise GpuParseError(f"unsupported slice fraction {frac[0]}/{frac[1]} in {text!r}")
    return frac, [at for at, _ in marks], _DECIMAL_CARD_RE.sub(_blank, _FRACTION_RE.sub(_blank, s))


def _memories(s: str, card: Card, frac, after: int | None, text: str
              ) -> tuple[set[int], set[Decimal]]:
    """Card sizes and slice sizes written in the text. `after`: where a fraction written after the
    card's name ends its reach ("A100 1/2 40G": the 40 GB after "1/2" is the slice's)."""
    card_mem: set[int] = set()
    slice_mem: set[Decimal] = set()
    for regex, slice_first in _SHARE_FORMS:
        for m in regex.finditer(s):
            if _HOST_BEFORE.search(s[:m.start()]):   # "内存 256G/512G": host memory, and
                s = s[:m.start()] + "#" * len(m.group()) + s[m.end():]   # what follows is not
                continue
            s = s[:m.start()] + _blank(m) + s[m.end():]
            part, whole = (m.group(1), m.group(2)) if slice_first else (m.group(2), m.group(1))
            size = _snap(Decimal(whole), card)
            if size is None:
                raise GpuParseError(f"{whole} GB is not a {card.family} memory size in {text!r}")
            card_mem.add(size)
            slice_mem.add(Decimal(part))
    for m in _MEM_RE.finditer(s):
        if _HOST_BEFORE.search(s[:m.start()]) or _HOST_AFTER.match(s[m.end():]):
            continue
        value = Decimal(m.group(1))
        # "20G切分" / "20GB slice" name the slice after it, "vGPU 10GB" / "切分 40G" before it
        # ... but in "80G 切分 40G" the mark belongs to the 40 GB after it
        marked = re.match(r"\s*(?:切分|切片|分片|SLICE)(?!\s*[0-9])", s[m.end():]) or re.search(
            rf"(?:{_SLICE_MARK})\s*$", s[:m.start()])
        size = _snap(value, card)
        if marked or (after is not None and m.start() > after) or (
                size is None and (frac or re.search(_SLICE_MARK, s))):
            slice_mem.add(value)
        elif size is None:
            raise GpuParseError(f"{value} GB is not a {card.family} memory size in {text!r}")
        else:
            card_mem.add(size)
    return card_mem, slice_mem


@dataclass(frozen=True)
class _Row:
    """What the card text itself says."""
    card: Card
    variant: str | None
    mig: tuple[int, Decimal] | None     # (compute slices, GB) of a MIG profile
    frac: tuple[int, int] | None        # a fraction: 1/2, 半卡, 0.5卡
    size: int | None                    # the card's memory, when written
    slice_gb: Decimal | None            # the slice's memory, when written (not in a MIG profile)
    slice_word: bool                    # 切分, vGPU ... : a slice, maybe of unwritten size
    text: str

    @property
    def is_slice(self) -> bool:
        return bool(self.mig or self.frac or self.slice_gb is not None or self.slice_word)

    def named(self, what: str) -> str:
        return f"{what} in {self.text!r}"


def parse_gpu(text: str, vram_gb_hint: Decimal | float | str | None = None, *,
              fraction: tuple[int, int] | None = None, slice_gb: Decimal | None = None
              ) -> GpuSpec:
    """Vendor card text ("A100-SXM4-80GB", "RTX 4090D", "A100 80GB MIG 3g.40gb") -> GpuSpec.

    `vram_gb_hint` is VRAM the listing states elsewhere (a 显存 column): on a whole-card row the
    card's memory; on a slice row the slice's memory, or a restatement of a memory the row
    already states (the slice's, or the card's). Any other reading raises (see `_read_hint`).
    `fraction` and `slice_gb` are a slice an API states apart from the text (spiders/parsing/
    slices.py), read as if written: a text that says another raises.
    """
    s = re.sub(r"[_\-]+", " ", unicodedata.normalize("NFKC", text or "")).upper()
    card, name_end = _card(s, text)
    s = _NAMES_RE.sub(_blank, s)   # "A10G" names a card, not 10 GB
    variant = _one({v for v, pat in _VARIANTS if re.search(pat, s)}, "variants", text)
    interconnect = next((name for name, pat in _INTERCONNECTS if re.search(pat, s)), None)
    mig = _one({(int(g), Decimal(mem)) for g, mem in _MIG_RE.findall(s)}, "MIG profiles", text)
    if mig and card.mig_slices is None:
        raise GpuParseError(f"MIG profile on a GPU without MIG in {text!r}")
    frac, frac_at, s = _fraction(_MIG_RE.sub(_blank, s), text, fraction)
    after = min((at for at in frac_at if at >= name_end), default=None)
    card_mem, slice_mem = _memories(s, card, frac, after, text)
    row = _Row(card, variant, mig, frac, _one(card_mem, "card memory sizes", text),
               _one(slice_mem | ({slice_gb} if slice_gb is not None else set()),
                    "slice memory sizes", text), bool(re.search(_SLICE_MARK, s)),
               text)
    size, slice_gb = _read_hint(row, _hint(vram_gb_hint))
    fraction, vram = _slice_of(row, size, slice_gb)
    return GpuSpec(f"{card.family}-{size}GB", variant, fraction, vram, interconnect)


def _known_size(row: _Row) -> int | None:
    """The card's memory as the text alone fixes it: written, the NVL card, the only size a MIG
    profile or a written fraction of a slice fits, or the family's only size."""
    card = row.card
    if row.size is not None:
        return row.size
    if row.variant == "NVL" and card.nvl_gb:
        return card.nvl_gb
    if row.mig:
        fits = {size for size in card.memory_gb if _mig_eighths(*row.mig, size, card)}
        if not fits:
            raise GpuParseError(row.named(f"MIG {row.mig[0]}g.{row.mig[1]}gb fits no "
                                          f"{card.family}"))
        if len(fits) == 1:
            return fits.pop()
    if row.slice_gb is not None and row.frac:
        return _card_of_slice(row.slice_gb, row.frac, row, "")
    return card.memory_gb[0] if len(card.memory_gb) == 1 else None


def _card_of_slice(slice_gb: Decimal, frac: tuple[int, int], row: _Row, source: str) -> int:
    """The card a slice of `slice_gb` that is `frac` of it is cut from; a size the family does
    not come in raises."""
    card, (n, d) = row.card, frac
    size = _snap(slice_gb * d / n, row.card)
    if size is None:
        raise GpuParseError(row.named(
            f"{source}{slice_gb} GB as a {n}/{d} slice means a {slice_gb * d / n} GB card; "
            f"{card.family} comes in {_sizes(card)} GB"))
    return size


def _read_hint(row: _Row, hint: Decimal | None) -> tuple[int, Decimal | None]:
    """(card memory, slice memory) with the VRAM hint read in: on a whole-card row it is the
    card's memory; on a slice row it is the slice's, unless the row already states a memory (the
    slice's, or the card's), and then it must restate one of them. Never guessed: raises."""
    card, size, slice_gb = row.card, _known_size(row), row.slice_gb
    if hint is not None and not row.is_slice:
        hint_size = _snap(hint, card)
        if hint_size is None:
            raise GpuParseError(row.named(f"VRAM hint {hint} GB is not a {card.family} memory size "
                                          f"({_sizes(card)} GB) and the row names no slice"))
        if size not in (None, hint_size):
            raise GpuParseError(row.named(
                f"VRAM hint {hint} GB contradicts {card.family}-{size}GB"))
        size = hint_size
    elif hint is not None:
        stated = row.mig[1] if row.mig else slice_gb
        if stated is None and size is not None and row.frac:
            stated = Decimal(size) * row.frac[0] / row.frac[1]
        if stated is not None:   # the hint restates the slice's memory, or names the card's
            hint_size = _snap(hint, card)
            if size is None and hint_size is not None and not _near(hint, stated):
                size = hint_size     # "A100 MIG 1g.10gb" with 显存 80: the card's memory
            elif not (_near(hint, stated) or (size is not None and hint_size == size)):
                whose = f"the {card.family}-{size}GB's {size} GB" if size else \
                    f"any {card.family} card's memory ({_sizes(card)} GB)"
                raise GpuParseError(row.named(
                    f"VRAM hint {hint} GB is neither the slice's {stated} GB nor {whose}"))
        elif row.frac:           # the hint is the slice's memory: it fixes the card
            size = _card_of_slice(hint, row.frac, row, "VRAM hint ")
        elif not (size is not None and _snap(hint, card) == size):
            slice_gb = hint      # "A100 vGPU" with 显存 20 GB: a 20 GB slice
    if size is None and row.mig:
        fits = tuple(s for s in card.memory_gb if _mig_eighths(*row.mig, s, card))
        raise GpuParseError(row.named(f"several {card.family} sizes fitting MIG "
                                      f"{row.mig[0]}g.{row.mig[1]}gb ({_sizes(fits)} GB)"))
    if size is None:
        # a slice named only by its own memory ("A100 20G切分") is cut from the big card
        size = card.slice_default_gb if slice_gb is not None else card.default_gb
    return size, slice_gb


def _slice_of(row: _Row, size: int, slice_gb: Decimal | None) -> tuple[Decimal, Decimal]:
    """(fraction of the card, VRAM offered); a slice whose stated forms disagree raises."""
    model = f"{row.card.family}-{size}GB"
    if row.mig:
        eighths = _mig_eighths(*row.mig, size, row.card)
        if eighths is None:
            raise GpuParseError(row.named(f"MIG {row.mig[0]}g.{row.mig[1]}gb does not fit {model}"))
        fraction = Decimal(eighths) / 8
        if row.frac and fraction != Decimal(row.frac[0]) / row.frac[1]:
            raise GpuParseError(row.named(f"MIG {row.mig[0]}g.{row.mig[1]}gb is {fraction} of "
                                          f"{model}, not {row.frac[0]}/{row.frac[1]}"))
        if slice_gb is not None and not _near(slice_gb, row.mig[1]):
            raise GpuParseError(row.named(f"{slice_gb} GB is not MIG {row.mig[0]}g.{row.mig[1]}gb"))
        return fraction, row.mig[1]
    if row.frac:
        vram = Decimal(size) * row.frac[0] / row.frac[1]
        if slice_gb is not None and not _near(slice_gb, vram):
            raise GpuParseError(row.named(f"{slice_gb} GB is not {row.frac[0]}/{row.frac[1]} "
                                          f"of {model}"))
        return Decimal(row.frac[0]) / row.frac[1], vram
    if slice_gb is not None:
        if slice_gb >= size:
            raise GpuParseError(row.named(f"slice of {slice_gb} GB is not smaller than {model}"))
        return slice_gb / size, slice_gb
    return Decimal(1), Decimal(size)


def _sizes(sizes: Card | tuple[int, ...]) -> str:
    return ", ".join(map(str, sizes.memory_gb if isinstance(sizes, Card) else sizes))


def _near(value: Decimal, target: Decimal) -> bool:
    """Within 10 %: a slice stated as 39.5 GB or 40960 MiB is the 40 GB slice."""
    return abs(value - target) <= Decimal("0.1") * target


# A row that prices several cards alike ("A100、A800", "A100 / A800", "A100 and A800", "A100或
# A800"); words that exclude cards ("GPUs other than V100 and A100", "除A100外") name none of them.
_ALTERNATIVES_SPLIT_RE = re.compile(r"\s*(?:、|,|，|/|&|或|(?<![a-z])(?:and|or)(?![a-z]))\s*",
                                    re.I)
_EXCLUDING_RE = re.compile(r"other|except|excluding|besides|除|以外|之外|其他|其它|以上|以下", re.I)


def card_alternatives(text: str) -> list[str]:
    """The cards a row names at one price, each part as written ("A100、A800" -> ["A100",
    "A800"]), for one offer per card; [] when the text is no such list: one card, a part that is
    no card of its own ("A100 40G/80G", "H100 SXM/PCIe"), one family twice, or words that exclude
    cards."""
    if _EXCLUDING_RE.search(text or ""):
        return []
    parts = _ALTERNATIVES_SPLIT_RE.split((text or "").strip())
    if len(parts) < 2:
        return []
    families = []
    for part in parts:
        try:
            families.append(gpu_family(parse_gpu(part).gpu_model))
        except GpuParseError:
            return []
    return parts if len(set(families)) == len(families) else []
