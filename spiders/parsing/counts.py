"""GPU counts written in a card or configuration cell: "8卡", "×8", "8x A100", "8*A100", "8-GPU",
"8 GPUs", "整机 8 卡", "双卡" -> 8 (or 2).

A count column, when a page has one, is read by the spider; this reads the count that sellers
write into the card text itself. Multiplication signs are only read in a part of the text that
names a GPU: configuration cells also multiply CPUs ("2×Xeon 8358") and memory ("64G×16").
"""

from __future__ import annotations

import re
import unicodedata


class GpuCountError(ValueError):
    """The text states more than one GPU count, or an impossible one; the message says why."""


# Parts of a configuration cell: "CPU: 2×Xeon 8358, 内存: 64G×16, GPU: 8×A100".
_PART_SPLIT_RE = re.compile(r"[,，;；|、\n]|(?<![0-9])/(?![0-9])|\s{2,}")
# A part that names a GPU: a card family (A100, H800, L40S, V100, T4, 4090D, MI300X ...) or the
# word; "4090x2" names a 4090.
_GPU_WORD_RE = re.compile(
    r"(?<![a-z0-9])(?:[abhlvtkp][0-9]{1,3}[a-z]?|a[0-9]{4}|gh?b?[0-9]{3}|mi[0-9]{3}[a-z]?"
    r"|(?:20|30|40|50)[5-9]0(?:\s*ti|d)?|rtx|gtx|geforce|tesla|nvidia|gpus?|显卡)(?![a-wyz0-9])")
_CN_COUNTS = {"单": 1, "一": 1, "双": 2, "两": 2, "二": 2, "三": 3, "四": 4, "六": 6, "八": 8,
              "十": 10}
# Counts that need no GPU word around them: the unit itself is a card.
_CARD_UNIT_RES = (
    re.compile(r"(?<![0-9a-z./])([0-9]{1,3})\s*(?:卡|张卡?|块卡?|片卡)(?!时|月|天|日|周|年)"),
    re.compile(r"(?<![0-9a-z./])([0-9]{1,3})\s*-?\s*gpus?(?![a-z])"),
    re.compile(r"整机\s*([0-9]{1,3})\s*卡"),
    re.compile(r"(?<![每/])([单一双两二三四六八十])\s*卡(?!时|月|天|日|周|年)"),
)
# Counts by multiplication, read only in a part that names a GPU. A factor followed by a memory
# unit is a size ("2×80GB" is two cards of 80 GB, not 80 cards).
_TIMES_RES = (
    re.compile(r"(?<![0-9a-z.])([0-9]{1,3})\s*[x×*]\s*(?=[a-z\u4e00-\u9fff(]|\d+\s*g)"),
    re.compile(r"(?:[×*]|(?<![a-z])x)\s*([0-9]{1,3})(?![0-9.])"
               r"(?!\s*(?:[gtm](?:i?b)?(?![a-z])|核|c(?![a-z])|v?cpus?|cores?))"),
)
# "PCIe 4.0 x16" is a lane count.
_LANES_RE = re.compile(r"pci\s*-?\s*e?\s*(?:gen\s*[0-9]|[0-9]\.[0-9])?\s*x\s*[0-9]+")


def gpu_count_in_text(*texts: str | None) -> int | None:
    """The GPU count written in the card/configuration texts, or None when none is written.
    Raises GpuCountError when they write two different counts or a count of zero."""
    text = " , ".join(t for t in texts if t)
    s = _LANES_RE.sub(" ", unicodedata.normalize("NFKC", text).lower())
    counts = set()
    for pattern in _CARD_UNIT_RES:
        for m in pattern.finditer(s):
            word = m.group(1)
            counts.add(_CN_COUNTS[word] if word in _CN_COUNTS else int(word))
    for part in _PART_SPLIT_RE.split(s):
        if _GPU_WORD_RE.search(part):
            counts |= {int(m.group(1)) for pattern in _TIMES_RES for m in pattern.finditer(part)}
    if 0 in counts:
        raise GpuCountError(f"a GPU count of zero in {text!r}")
    if len(counts) > 1:
        raise GpuCountError(f"several GPU counts ({', '.join(map(str, sorted(counts)))}) "
                            f"in {text!r}")
    return counts.pop() if counts else None


# A count cell of its own: "8颗" (eight cards), "1/4颗" (a quarter of one card): tencent_cn_list's
# GPU column, whose header names the card.
_COUNT_CELL_RE = re.compile(r"\s*([0-9]+)(?:\s*/\s*([0-9]+))?\s*颗\s*")


def count_cell(text: str) -> tuple[int, tuple[int, int] | None] | None:
    """(cards, the slice of one card) a count cell writes: "8颗" -> (8, None), "1/4颗" -> (1, (1,
    4)); None for a cell of another form."""
    match = _COUNT_CELL_RE.fullmatch(unicodedata.normalize("NFKC", text))
    if match is None:
        return None
    if match.group(2):
        return 1, (int(match.group(1)), int(match.group(2)))
    return int(match.group(1)), None


# A price calculator's accelerator text (huaweicloud_cn's acceleratorCard): cards times the card,
# then cards times each card's memory, "2 * NVIDIA T4 / 2 * 16G".
_ACCELERATOR_RE = re.compile(r"^\s*(\d+)\s*\*\s*(.+?)\s*(?:/\s*(\d+)\s*\*\s*(\S+))?\s*$")
# fuzzbuster's scrape_test.go shows the calculator writing "NVIDIAT4" as well as "NVIDIA T4".
_GLUED_MAKER_RE = re.compile(r"\bNVIDIA(?=[A-Z0-9])")
# The count of an accelerator text that writes none, or two that disagree: the count stage
# quarantines it with this text, so the flavor is seen, never guessed as one card.
UNREAD_COUNT = "unknown: acceleratorCard names no card count (spiders/parsing/counts.py)"


def accelerator(text: str) -> tuple[str, int | str]:
    """(card as written, cards per flavor) of an accelerator text: "2 * NVIDIA T4 / 2 * 16G" ->
    ("NVIDIA T4 16G", 2), the calculator's own form split as fields. A text of another form is
    kept whole with UNREAD_COUNT, and so is one whose two counts disagree ("2 * T4 / 4 * 16G")."""
    written = _GLUED_MAKER_RE.sub("NVIDIA ", text.strip())
    m = _ACCELERATOR_RE.match(written)
    if m is None:
        return written, UNREAD_COUNT
    cards, card, memory_cards, memory = m.groups()
    if memory_cards and memory_cards != cards:   # which count is it?
        return written, UNREAD_COUNT
    return (f"{card} {memory}" if memory else card), int(cards)
