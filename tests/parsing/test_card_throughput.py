"""Card throughput and segment are card facts: the card catalog holds them with their evidence,
the advisor reads them (pipelines/advisor/throughput.py), one figure per memory size."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.advisor.throughput import CONSUMER_MODELS, PCIE_FACTOR, THROUGHPUT
from spiders.parsing import card_catalog
from spiders.parsing.card_catalog import CARDS, CARDS_BY_FAMILY

HEADER = Path(card_catalog.__file__).with_name("card_catalog.csv").read_text(
    encoding="utf-8").splitlines()[0]
ROW = "X1,NVIDIA,datacenter,X1,40|80,40,80,,,5,1,20,evidence"


@pytest.mark.parametrize(("model", "figures"), [
    ("A100-80GB", (1.0, 1.0)), ("A100-40GB", (0.95, 0.8)), ("H100-80GB", (2.5, 2.0)),
    ("H100-94GB", (2.3, 2.4)), ("H800-80GB", (2.5, 2.0)), ("RTX4090-24GB", (0.55, 0.8)),
    ("RTX4090-48GB", (0.55, 0.8)), ("RTX4090D-24GB", (0.5, 0.7)),
])
def test_the_advisor_reads_each_models_throughput_from_the_catalog(model, figures):
    assert THROUGHPUT[model] == figures
    assert CARDS_BY_FAMILY[model.split("-")[0]].throughput_by_model()[model] == figures


def test_only_catalogued_figures_and_every_figure_has_its_evidence():
    assert len(THROUGHPUT) == 8
    assert PCIE_FACTOR == {"A100": 0.9, "H100": 0.75, "H800": 0.75}
    for card in CARDS:
        assert bool(card.throughput or card.pcie_factor) <= bool(card.throughput_evidence)


def test_consumer_models_follow_the_catalogs_segment():
    assert {"RTX4090-24GB", "RTX4090-48GB", "RTX4090D-24GB"} <= CONSUMER_MODELS
    assert not {"A100-80GB", "H800-80GB", "RTXA6000-48GB"} & CONSUMER_MODELS
    assert all(CARDS_BY_FAMILY[m.split("-")[0]].segment == "consumer" for m in CONSUMER_MODELS)


@pytest.mark.parametrize(("extra", "expected"), [
    (",,,,", None),                                          # no figure: not sized
    (",0.9|1.0,0.8|1.0,0.9,why", ((0.9, 0.8), (1.0, 1.0))),
])
def test_a_row_reads_one_figure_pair_per_memory_size(tmp_path, extra, expected):
    path = tmp_path / "cards.csv"
    path.write_text(f"{HEADER}\n{ROW}{extra}\n", encoding="utf-8")
    assert card_catalog.load_cards(path)[0].throughput == expected


@pytest.mark.parametrize("extra", [
    ",1.0,1.0,,why",                  # one figure for two memory sizes
    ",1.0|1.0,,,why",                 # training without inference
    ",1.0|1.0,1.0,,why",              # the two columns disagree on the count
    ",0|1.0,1.0|1.0,,why",            # not positive
    ",1.0|1.0,1.0|1.0,,",             # a figure without its evidence
    ",,,0.9,",                        # a PCIe share without its evidence
    ",fast|1.0,1.0|1.0,,why",         # not a number
])
def test_a_bad_throughput_row_fails_the_catalogs_load(tmp_path, extra):
    path = tmp_path / "cards.csv"
    path.write_text(f"{HEADER}\n{ROW}{extra}\n", encoding="utf-8")
    with pytest.raises(ValueError):
        card_catalog.load_cards(path)
