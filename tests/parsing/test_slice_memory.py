"""A memory figure on a slice row is read one way (issue 25 item 4).

On a row that says it is a slice (1/2, 半卡, 二分之一, 0.5卡, a MIG profile, 切分, vGPU, "40GB of
80GB", "20G/80G") a memory figure is the slice's memory, wherever the table gives it: a memory
column (the hint), the card cell, or a header joined into the card text. It may restate a memory
the row already states (the slice's, or the card's), and on a whole-card row it is the card's.
A figure that fits none of these is refused with a reason, never read as another card.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal as D

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spiders.parsing.card_catalog import CARDS
from spiders.parsing.gpu_models import GpuParseError, GpuSpec, memory_unit, parse_gpu

HALF_80 = GpuSpec("A100-80GB", None, D("0.5"), D(40))
QUARTER_80 = GpuSpec("A100-80GB", None, D("0.25"), D(20))
HALF_40 = GpuSpec("A100-40GB", None, D("0.5"), D(20))

# The row, half an A100-80GB, in every way a table gives its memory: text, hint
HALF_OF_AN_80GB = [
    # a memory column: the slice's memory on a slice row
    ("NVIDIA A100 SXM4 1/2 MIG", "40GB"),   # the row (was read as an A100-40GB)
    ("A100 1/2", 40), ("A100 半卡", "40"), ("A100 二分之一", "40 GB"), ("A100 0.5卡", "40960 MiB"),
    ("1/2 A100", D("39.5")), ("A100 40G切分", "40"), ("A100 vGPU", "40"),
    ("A100 MIG 3g.40gb", "40"), ("A100 MIG 4g.40gb", "40GB"),
    # ... or a restatement of a memory the row already states
    ("A100 80G 1/2 MIG", "40GB"), ("A100 80G 1/2 MIG", "80GB"), ("A100 80G 半卡", 80),
    ("A100 MIG 3g.40gb", "80"), ("A100 40GB of 80GB", 40), ("A100 40G/80G", "80"),
    # inside the card cell: after the fraction it is the slice's, before it the card's
    ("A100 1/2 40G", None), ("A100 半卡 40G", None), ("A100 二分之一 40GB", None),
    ("A100 0.5卡 40G", None), ("A100 80G 1/2 MIG 40GB", None), ("A100 80G 半卡 40G", None),
    ("A100 80G 1/2", None), ("1/2 A100 80G", None), ("A100 MIG 3g.40gb", None),
    ("A100 vGPU-40G", None), ("A100 80G 切分 40G", None),
    ("A100 40G/80G", None), ("A100 40GB / 80GB", None), ("A100 40GB of 80GB", None),
    ("A100 80G卡的40G", None),
    # a header joined into the card text: a section header "A100 80GB" over a "1/2 MIG" cell,
    # a column header "A100" over a "1/2 40GB" cell, and a 显存 column on top
    ("NVIDIA A100 80GB 1/2 MIG", None), ("NVIDIA A100 1/2 40GB", None),
    ("NVIDIA A100 80GB 1/2 MIG", "40"),
]


@pytest.mark.parametrize(("text", "hint"), HALF_OF_AN_80GB)
def test_half_an_a100_80gb_in_every_form(text, hint):
    assert replace(parse_gpu(text, hint), gpu_variant=None) == HALF_80


def test_one_memory_column_reads_one_way_down_the_table():
    # the issue: the 40 GB of the 1/2 row and the 20 GB of the 1/4 row are both slice memory
    column = [("A100 SXM4 1/2 MIG", "40"), ("A100 SXM4 1/4 MIG", "20"),
              ("A100 SXM4 1/8 MIG", "10"), ("A100 SXM4", "80")]
    assert [(s.gpu_model, s.gpu_fraction, s.vram_gb) for s in
            (parse_gpu(text, hint) for text, hint in column)] == [
        ("A100-80GB", D("0.5"), D(40)), ("A100-80GB", D("0.25"), D(20)),
        ("A100-80GB", D("0.125"), D(10)), ("A100-80GB", 1, D(80))]


@pytest.mark.parametrize(("text", "hint", "expected"), [
    ("A100 1/4 MIG", "20GB", QUARTER_80), ("A100 四分之一", 20, QUARTER_80),
    ("A100 1/4 20G", None, QUARTER_80), ("A100 20G/80G", None, QUARTER_80),
    ("A100 1/2", "20", HALF_40), ("A100 40G 半卡", None, HALF_40), ("A100 40G 1/2", "20", HALF_40),
    ("A100 40G 1/2", "40", HALF_40), ("A100 MIG 3g.20gb", "20", HALF_40),
    ("A100 20G 1/2", None, HALF_40),   # 20 is no A100 card: the slice's
    ("1/2 A100", None, HALF_40),   # no memory anywhere: the name alone means the 40 GB card
    ("A100 MIG 1g.10gb", 80, GpuSpec("A100-80GB", None, D("0.125"), D(10))),   # 80: the card's
    ("A100 MIG 1g.10gb", 40, GpuSpec("A100-40GB", None, D("0.25"), D(10))),
    ("A30 1/2", "12", GpuSpec("A30-24GB", None, D("0.5"), D(12))),
    ("A30 1/2", "24", GpuSpec("A30-24GB", None, D("0.5"), D(12))),   # its only size: restated
    ("H100 1/2", "47", GpuSpec("H100-94GB", None, D("0.5"), D(47))),
    ("H100 NVL 1/2", "94", GpuSpec("H100-94GB", "NVL", D("0.5"), D(47))),
    ("RTX 4090 1/2", "24", GpuSpec("RTX4090-48GB", None, D("0.5"), D(24))),   # the 48 GB card
    ("A100 vGPU", "20", QUARTER_80), ("A100 80G vGPU", "20", QUARTER_80),
    ("A100 80G vGPU", "80", GpuSpec("A100-80GB", None, D(1), D(80))),   # a whole-card vGPU
    ("内存 256G/512G A100 80G", None, GpuSpec("A100-80GB", None, D(1), D(80))),   # host memory
])
def test_other_slices_and_cards(text, hint, expected):
    assert parse_gpu(text, hint) == expected


# text, hint, what the reason says: the two readings disagree, or the figure fits no card
REFUSED = [
    ("A100 80G 1/2", "30", "VRAM hint 30 GB is neither the slice's 40 GB nor the A100-80GB's"),
    ("A100 80G 1/4 MIG", "40", "neither the slice's 20 GB nor the A100-80GB's 80 GB"),
    ("A100 1/2", "80", "VRAM hint 80 GB as a 1/2 slice means a 160 GB card; A100 comes in 40, 80"),
    ("A100 半卡", "30", "30 GB as a 1/2 slice means a 60 GB card"),
    ("A100 四分之一", "40", "40 GB as a 1/4 slice means a 160 GB card"),
    ("H100 1/2", "80", "means a 160 GB card; H100 comes in 80, 94 GB"),
    ("A100 1/2 80G", None, "80 GB as a 1/2 slice means a 160 GB card"),
    ("A100 1/4 30G", None, "30 GB as a 1/4 slice means a 120 GB card"),
    ("L40S 1/2 30G", None, "means a 60 GB card; L40S comes in 48 GB"),
    ("A30 1/2", "18", "neither the slice's 12 GB nor the A30-24GB's 24 GB"),
    ("A100 MIG 3g.40gb", "30", "neither the slice's 40 GB nor the A100-80GB's 80 GB"),
    ("A100 MIG 1g.10gb", "30", "neither the slice's 10 GB nor any A100 card's memory (40, 80"),
    ("A100 80G MIG 3g.40gb", "20", "neither the slice's 40 GB nor the A100-80GB's 80 GB"),
    ("A100 MIG 1g.10gb", "10", "several A100 sizes fitting MIG 1g.10gb (40, 80 GB)"),
    ("A100 80G 1/4 MIG 3g.40gb", None, "MIG 3g.40gb is 0.5 of A100-80GB, not 1/4"),
    ("A100 80G MIG 3g.40gb 20G切分", None, "20 GB is not MIG 3g.40gb"),
    ("A100 80G 1/2 MIG 30GB", None, "30 GB is not 1/2 of A100-80GB"),
    ("A100 20G", None, "20 GB is not a A100 memory size"),
    ("A100 20G/70G", None, "70 GB is not a A100 memory size"),
    ("A100 80G/80G", None, "slice of 80 GB is not smaller than A100-80GB"),
    ("A100 40G/80G 1/4", None, "40 GB is not 1/4 of A100-80GB"),
    ("A100 vGPU", "80", "slice of 80 GB is not smaller than A100-80GB"),
    ("Tesla A100", "20", "VRAM hint 20 GB is not a A100 memory size (40, 80 GB) and the row "
                         "names no slice"),
    ("A100 80GB", "40", "VRAM hint 40 GB contradicts A100-80GB"),
    ("A100 1/2", "0", "VRAM hint is not a memory size"),
    ("A100 1/2", "40GB/卡", "VRAM hint is not a memory size"),
]


@pytest.mark.parametrize(("text", "hint", "reason"), REFUSED)
def test_refused_with_a_reason_a_person_can_read(text, hint, reason):
    with pytest.raises(GpuParseError) as err:
        parse_gpu(text, hint)
    assert reason in str(err.value)
    if "VRAM hint is not" not in reason:
        assert repr(text) in str(err.value)   # the reason names the row's card text


@pytest.mark.parametrize(("text", "hint", "vram"), [
    ("A100 80G 1/2", "40", 40), ("A100 80G 1/2", "80", 40), ("A100 1/2", "40", 40),
    ("A100 半卡", "20", 20), ("A30 1/2", "12", 12), ("A100 MIG 3g.40gb", "80", 40),
    ("A100 80G 1/4 MIG", "20", 20), ("A100 1/4 20G", None, 20), ("Tesla A100", "40", 40),
])
def test_the_refused_rows_with_a_memory_that_fits_are_read(text, hint, vram):
    # the same card texts with a memory that fits one reading: a test of the refusals' edges
    assert parse_gpu(text, hint).vram_gb == vram


@pytest.mark.parametrize(("header", "unit"), [
    ("显存(GB)", "GB"), ("显存（GB）", "GB"), ("显存(MiB)", "MIB"), ("GPU 显存（GB/卡）", "GB"),
    ("显存 G", "G"), ("显存（单卡）", ""), ("显存", ""), ("VRAM / GPU", ""), ("GPU型号", ""),
])
def test_memory_unit_of_a_header(header, unit):
    assert memory_unit(header) == unit


# --- properties over the catalog ---------------------------------------------------------------

_CN = {(1, 2): "半卡", (1, 4): "四分之一", (1, 8): "八分之一"}
_CARD_SIZES = st.sampled_from([(card, size) for card in CARDS for size in card.memory_gb])
_FRACTIONS = st.sampled_from(sorted(_CN))


def _gb(value: D) -> str:
    return f"{value.normalize():f}"


@settings(max_examples=300, deadline=None)
@given(_CARD_SIZES, _FRACTIONS, st.booleans())
def test_the_slice_memory_and_the_full_memory_give_the_same_card(card_size, fraction, cn):
    card, size = card_size
    n, d = fraction
    f, s = card.family, _gb(D(size) * n / d)
    mark = _CN[fraction] if cn else f"{n}/{d}"
    expected = GpuSpec(f"{f}-{size}GB", None, D(n) / d, D(size) * n / d)
    readings = [
        (f"{f} {size}G {mark}", None),          # the full memory, in the card cell
        (f"{f} {size}G {mark}", s),             # ... and the slice's in a memory column
        (f"{f} {size}G {mark}", f"{size}GB"),   # ... or the card's, restated
        (f"{f} {mark}", s),                     # the slice's memory column alone
        (f"{f} {mark}", f"{D(s) * 1024:f} MiB"),
        (f"{f} {mark} {s}G", None),             # the slice's memory after the fraction
        (f"{f} {size}G {mark} {s}G", None),
        (f"{f} {s}G/{size}G", None),            # "20G/80G"
        (f"{f} {s}GB of {size}GB", None),
        (f"{f} {size}G卡的{s}G", None),
    ]
    for text, hint in readings:
        assert parse_gpu(text, hint) == expected, (text, hint)


def _mig_profiles():
    """(card, card size, compute slices, profile GB, eighths) of every MIG profile the catalog's
    MIG cards take (profile GB rounded as NVIDIA names them: 1g.18gb on a 141 GB card)."""
    by_slices = {7: {1: (1, 2), 2: (2,), 3: (4,), 4: (4,), 7: (8,)}, 4: {1: (2,), 2: (4,), 4: (8,)}}
    return [(card, size, g, int((D(size) * e / 8).to_integral_value()), e)
            for card in CARDS if card.mig_slices for size in card.memory_gb
            for g, eighths in by_slices[card.mig_slices].items() for e in eighths]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_mig_profiles()))
def test_a_mig_profile_reads_the_same_with_its_card_in_the_text_or_the_memory_column(profile):
    card, size, g, mem, eighths = profile
    f = card.family
    expected = GpuSpec(f"{f}-{size}GB", None, D(eighths) / 8, D(mem))
    for text, hint in [(f"{f} {size}GB MIG {g}g.{mem}gb", None),
                       (f"{f} {size}GB MIG {g}g.{mem}gb", mem),    # the slice's, restated
                       (f"{f} {size}GB MIG {g}g.{mem}gb", size),   # the card's, restated
                       (f"{f} MIG {g}g.{mem}gb", size)]:           # the card's, from the column
        assert parse_gpu(text, hint) == expected, (text, hint)
    try:   # the slice's memory alone fixes the card, or it is refused as several sizes
        assert parse_gpu(f"{f} MIG {g}g.{mem}gb", mem) == expected
    except GpuParseError as exc:
        assert f"several {f} sizes fitting MIG" in str(exc)


_MEMORY = st.decimals(min_value=D("0.5"), max_value=D(400), places=1)


def _fits(value: D, size: int) -> bool:
    return abs(value - size) <= D("0.1") * size


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(CARDS), _FRACTIONS, _MEMORY)
def test_a_memory_column_on_a_slice_row_is_the_slice_or_refused(card, fraction, hint):
    n, d = fraction
    fitting = [s for s in card.memory_gb if _fits(hint * d / n, s)]
    # a family of one size is known without the figure, which may then restate it (A30 1/2, 24)
    (only,) = card.memory_gb if len(card.memory_gb) == 1 else (None,)
    restated = only is not None and _fits(hint, only)
    try:
        spec = parse_gpu(f"{card.family} {n}/{d}", hint)
    except GpuParseError as exc:
        assert not fitting and not restated, f"{hint} GB fits {fitting or only}: {exc}"
    else:
        assert fitting or restated, f"{hint} GB fits no {card.family} as a {n}/{d} slice: {spec}"
        nearest = min(fitting or [only], key=lambda s: abs(hint * d / n - s))
        assert spec.gpu_model == f"{card.family}-{nearest}GB" and spec.gpu_fraction == D(n) / d
        assert _fits(hint, spec.vram_gb) or restated


@settings(max_examples=500, deadline=None)
@given(_CARD_SIZES, _FRACTIONS, _MEMORY)
def test_with_the_card_written_a_memory_must_be_the_slices_or_the_cards(card_size, fraction,
                                                                       hint):
    card, size = card_size
    n, d = fraction
    slice_gb = D(size) * n / d
    nearest = min(card.memory_gb, key=lambda s: abs(hint - s))
    either = _fits(hint, slice_gb) or (_fits(hint, size) and nearest == size)
    try:
        spec = parse_gpu(f"{card.family} {size}GB {n}/{d}", hint)
    except GpuParseError as exc:
        assert not either, exc
        assert "neither the slice's" in str(exc)
    else:
        assert either and spec == GpuSpec(f"{card.family}-{size}GB", None, D(n) / d, slice_gb)


@settings(max_examples=300, deadline=None)
@given(_CARD_SIZES, _MEMORY)
def test_on_a_whole_card_row_the_memory_is_the_cards(card_size, hint):
    card, size = card_size
    nearest = min(card.memory_gb, key=lambda s: abs(hint - s))
    try:
        spec = parse_gpu(f"{card.family} {size}GB", hint)
    except GpuParseError as exc:
        assert not (_fits(hint, size) and nearest == size), exc
    else:
        assert _fits(hint, size) and spec.gpu_fraction == 1 and spec.vram_gb == size
