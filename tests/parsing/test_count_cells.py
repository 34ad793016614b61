"""Count cells read once, by normalization (spiders/parsing/counts.py count_cell and accelerator,
pipelines/normalize/count_cells.py): tencent_cn_list's GPU column ("8颗", "1/4颗") and
huaweicloud_cn's accelerator text ("2 * NVIDIA T4 / 2 * 16G"), which their spiders once read."""

from __future__ import annotations

import pytest

from pipelines.normalize.count_cells import with_count_cell
from spiders.parsing.counts import UNREAD_COUNT, accelerator, count_cell


@pytest.mark.parametrize("cell, expected", [
    ("1颗", (1, None)), ("8颗", (8, None)), (" 4 颗 ", (4, None)),
    ("1/4颗", (1, (1, 4))), ("1/2 颗", (1, (1, 2))), ("１/４颗", (1, (1, 4))),   # full width
    ("一颗", None), ("", None), ("8", None), ("8卡", None), ("1/4", None),
])
def test_count_cells(cell, expected):
    assert count_cell(cell) == expected


@pytest.mark.parametrize("text, expected", [
    ("1 * NVIDIA T4 / 1 * 16G", ("NVIDIA T4 16G", 1)),
    ("2 * NVIDIA T4 / 2 * 16G", ("NVIDIA T4 16G", 2)),
    ("2 * NVIDIAT4 / 2 * 16G", ("NVIDIA T4 16G", 2)),        # the glued spelling
    ("1 * NVIDIA V100 / 1 * 32G", ("NVIDIA V100 32G", 1)),
    ("8 * NVIDIA Tesla V100 / 8 * 16G", ("NVIDIA Tesla V100 16G", 8)),
    ("8 * NVIDIA A100 / 8 * 80G", ("NVIDIA A100 80G", 8)),
    ("4 * NVIDIA A10 / 4 * 24G", ("NVIDIA A10 24G", 4)),
    ("1 * NVIDIA L4", ("NVIDIA L4", 1)),
    ("NVIDIA T4", ("NVIDIA T4", UNREAD_COUNT)),                               # no count
    ("2 * NVIDIA T4 / 4 * 16G", ("2 * NVIDIA T4 / 4 * 16G", UNREAD_COUNT)),   # two counts
])
def test_accelerator_texts(text, expected):
    assert accelerator(text) == expected


@pytest.mark.parametrize("item, expected", [
    ({"gpu_text": "T4", "gpu_count_text": "8颗"}, {"gpu_count": 8}),
    ({"gpu_text": "T4", "gpu_count_text": "1/4颗"}, {"gpu_count": 1, "gpu_fraction": 0.25}),
    # another form goes on as the count, for the count stage to quarantine with its text
    ({"gpu_text": "T4", "gpu_count_text": "一颗"}, {"gpu_count": "一颗"}),
    ({"gpu_text": "2 * NVIDIA T4 / 2 * 16G", "accelerator_text": "2 * NVIDIA T4 / 2 * 16G"},
     {"gpu_text": "NVIDIA T4 16G", "gpu_count": 2}),
    ({"gpu_text": "T4", "gpu_count": 2}, {}),                  # no cell: the item as it is
])
def test_a_cell_becomes_the_count_and_slice_once(item, expected):
    assert with_count_cell(item) == {**item, **expected}
