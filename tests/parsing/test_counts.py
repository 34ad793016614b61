"""GPU counts written in card and configuration cells -> one count, None, or a reason."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spiders.parsing.counts import GpuCountError, gpu_count_in_text

COUNTS = [
    ("A100 80G ×8", 8), ("8卡 H800 NVLink", 8), ("NVIDIA A100 80G SXM4 8卡整机", 8),
    ("整机 8 卡 A100", 8), ("整机8卡", 8), ("8x A100 80GB", 8), ("8 x A100", 8), ("8*A100", 8),
    ("A100*8", 8), ("RTX 4090 24G*2", 2), ("4090x2", 2), ("8-GPU H100 server", 8),
    ("8 GPUs", 8), ("1 GPU", 1), ("H100 SXM5 x8", 8), ("8张A100", 8), ("4块 4090", 4),
    ("双卡 4090", 2), ("四卡 A100", 4), ("八卡 H800", 8), ("A100 80G SXM4 单卡", 1),
    ("2×80GB A100", 2),                                    # two cards of 80 GB, not 80 cards
    ("8卡 A100 ×8", 8),                                    # the same count twice is one count
    ("CPU: 2×Xeon 8358, 内存: 64G×16, GPU: 8×A100", 8),    # CPUs and DIMMs are not GPUs
    ("A100 80G PCIe 4.0 x16", None),                       # PCIe lanes
    ("A100 80G PCIe ×4", 4),
    # no count written
    ("NVIDIA A100 80G SXM4 整卡", None), ("H800 80GB", None), ("RTX 4090D", None), ("", None),
    ("A100 80G 1/2卡", None), ("A100 0.5卡", None), ("A100 80G 半卡", None),  # slices, not counts
    ("A100 80G MIG 3g.40gb", None), ("vGPU-20G", None), ("A100 80G 切分 40G", None),
    ("H800 显卡", None), ("每卡 A100", None), ("H800 80G SXM5", None),
]


@pytest.mark.parametrize(("text", "count"), COUNTS)
def test_gpu_count_in_text(text, count):
    assert gpu_count_in_text(text) == count


def test_several_cells_are_read_together():
    assert gpu_count_in_text("NVIDIA A100 80G", "8卡整机") == 8
    assert gpu_count_in_text(None, "H800", "") is None


@pytest.mark.parametrize(("texts", "reason"), [
    (("4卡 A100 ×8",), "several GPU counts (4, 8)"),
    (("A100 单卡", "8卡整机"), "several GPU counts (1, 8)"),
    (("2*E5-2680 8*A100",), "several GPU counts (2, 8)"),    # a CPU count in a GPU part: refuse
    (("0卡 A100",), "zero"),
    (("A100 ×0",), "zero"),
])
def test_conflicting_counts_raise_with_reason(texts, reason):
    with pytest.raises(GpuCountError) as err:
        gpu_count_in_text(*texts)
    assert reason in str(err.value)


SPELLINGS = ["{n}卡 {card}", "{card} {n}卡整机", "整机 {n} 卡 {card}", "{card} ×{n}", "{n}x {card}",
             "{n} x {card}", "{n}*{card}", "{card}*{n}", "{n}-GPU {card}", "{n} GPUs {card}",
             "{card} x{n}", "{n}×{card} 80GB", "{card}（{n}卡）", "GPU: {n}×{card}, CPU: 2×Xeon"]
CARDS = ["A100 80G", "NVIDIA H800 80GB SXM5", "RTX 4090", "H100 NVLink", "L40S", "A800", "H20"]


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 64), spelling=st.sampled_from(SPELLINGS), card=st.sampled_from(CARDS))
def test_count_property(n, spelling, card):
    assert gpu_count_in_text(spelling.format(n=n, card=card)) == n


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=40))
def test_arbitrary_text_gives_a_count_none_or_a_reason(text):
    try:
        count = gpu_count_in_text(text)
    except GpuCountError as err:
        assert str(err)
    else:
        assert count is None or count >= 1
