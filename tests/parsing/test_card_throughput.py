"""A card's specifications are card facts: the card catalog holds, for every family, its dense
BF16/FP16 TFLOPS and memory bandwidth per memory size (and of its PCIe board), its NVLink, and
their evidence; the advisor derives throughput from them (pipelines/advisor/throughput.py) and
reads consumer cards and NVLink from the same rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.advisor.throughput import CONSUMER_FAMILIES
from spiders.parsing import card_catalog
from spiders.parsing.card_catalog import CARDS, CARDS_BY_FAMILY

HEADER = Path(card_catalog.__file__).with_name("card_catalog.csv").read_text(
    encoding="utf-8").splitlines()[0]
ROW = "X1,NVIDIA,datacenter,X1,40|80,40,80,,,5,1,20,evidence"


@pytest.mark.parametrize(("model", "pcie", "specs"), [
    ("A100-80GB", False, (312, 2039)), ("A100-40GB", False, (312, 1555)),
    ("A100-80GB", True, (312, 1935)), ("H100-80GB", False, (989, 3350)),
    ("H100-94GB", False, (835, 3900)), ("H100-80GB", True, (756, 2000)),
    ("H800-80GB", False, (989, 3350)), ("H20-96GB", False, (148, 4000)),
    ("RTX4090-24GB", False, (165.2, 1008)), ("RTX4090-24GB", True, (165.2, 1008)),  # no PCIe row
    ("RTX3080-12GB", False, (61.3, 912)),
])
def test_each_models_specifications_come_from_the_catalog(model, pcie, specs):
    assert CARDS_BY_FAMILY[model.split("-")[0]].specs(model, pcie=pcie) == specs


def test_every_family_has_specifications_and_their_evidence():
    for card in CARDS:
        assert len(card.bf16_tflops) == len(card.bandwidth_gbs) == len(card.memory_gb)
        assert card.spec_evidence, card.family
        assert (card.pcie_bf16_tflops is None) == (card.pcie_bandwidth_gbs is None)


def test_nvlink_is_the_catalogs_and_cut_where_the_china_market_cards_cut_it():
    assert CARDS_BY_FAMILY["H100"].nvlink_gbs == 900
    assert CARDS_BY_FAMILY["H800"].nvlink_gbs == CARDS_BY_FAMILY["A800"].nvlink_gbs == 400
    assert all(CARDS_BY_FAMILY[f].nvlink_gbs is None for f in CONSUMER_FAMILIES)


def test_consumer_families_follow_the_catalogs_segment():
    assert {"RTX4090", "RTX4090D", "RTX3090"} <= CONSUMER_FAMILIES
    assert not {"A100", "H800", "RTXA6000", "L40S"} & CONSUMER_FAMILIES
    assert all(CARDS_BY_FAMILY[f].segment == "consumer" for f in CONSUMER_FAMILIES)


def _load(tmp_path, extra: str):
    path = tmp_path / "cards.csv"
    path.write_text(f"{HEADER}\n{ROW}{extra}\n", encoding="utf-8")
    return card_catalog.load_cards(path)[0]


@pytest.mark.parametrize(("extra", "expected"), [
    (",312,1555|2039,,,600,why", ((312, 312), (1555, 2039), None)),     # one TFLOPS for both
    (",312,1555|2039,312,1555|1935,,why", ((312, 312), (1555, 2039), (312, 312))),
])
def test_a_row_reads_one_figure_per_memory_size(tmp_path, extra, expected):
    card = _load(tmp_path, extra)
    assert (card.bf16_tflops, card.bandwidth_gbs, card.pcie_bf16_tflops) == expected


@pytest.mark.parametrize("extra", [
    ",,1555|2039,,,,why",                 # no TFLOPS
    ",312,,,,,why",                       # no bandwidth
    ",312,1555|2039|3000,,,,why",         # three figures for two memory sizes
    ",0,1555,,,,why",                     # not positive
    ",fast,1555,,,,why",                  # not a number
    ",312,1555,,,,",                      # specifications without their evidence
    ",312,1555,312,,,why",                # a PCIe board's TFLOPS without its bandwidth
])
def test_a_bad_specification_row_fails_the_catalogs_load(tmp_path, extra):
    with pytest.raises(ValueError):
        _load(tmp_path, extra)


@given(st.lists(st.floats(0.5, 9999, allow_nan=False), min_size=2, max_size=2))
def test_any_positive_pair_of_figures_reads_back(tmp_path_factory, figures):
    text = "|".join(f"{f:.3f}" for f in figures)
    card = _load(tmp_path_factory.mktemp("cards"), f",{text},{text},,,,why")
    assert card.bf16_tflops == tuple(float(f"{f:.3f}") for f in figures)
