"""Every card's throughput comes from one model over its public specifications (card_catalog.csv):
the table the advisor used before is reproduced within the stated error, no catalogued card is
left without a figure, and the model behaves as throughput must (more compute or bandwidth never
makes a card slower; training follows compute more than inference does)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.advisor import Offer, Workload, advise, card_throughput, modeled_throughput
from pipelines.advisor.throughput import throughput_table
from spiders.parsing.card_catalog import CARDS
from tests.helpers.advisor_offers import row

# The table the advisor used before the model (docs/advisor.md up to issue 31): (model, board),
# (training, inference). PCIe boards were the SXM figure × the old PCIe factor.
TODAYS_TABLE = {
    ("A100-80GB", "default"): (1.0, 1.0), ("A100-40GB", "default"): (0.95, 0.8),
    ("H100-80GB", "default"): (2.5, 2.0), ("H100-94GB", "default"): (2.3, 2.4),
    ("H800-80GB", "default"): (2.5, 2.0), ("RTX4090-24GB", "default"): (0.55, 0.8),
    ("RTX4090-48GB", "default"): (0.55, 0.8), ("RTX4090D-24GB", "default"): (0.5, 0.7),
    ("A100-80GB", "PCIe"): (0.9, 0.9), ("H100-80GB", "PCIe"): (2.5 * 0.75, 2.0 * 0.75),
    ("H800-80GB", "PCIe"): (2.5 * 0.75, 2.0 * 0.75),
}
# The stated error (docs/advisor.md): every training figure within 10 %, every datacentre
# inference figure within 21 %.
TRAINING_ERROR, INFERENCE_ERROR = 0.10, 0.21
# Where the old table is not reproduced, and why: the RTX 4090's inference figure (0.8) was above
# what its 1,008 GB/s allows against the A100's 2,039 GB/s in bandwidth-bound decoding (0.49);
# the model gives 0.50 (4090D: 0.49 for 0.7). The measured departure is pinned, so a change shows.
DEPARTURES = {("RTX4090-24GB", "default", "inference"): -0.37,
              ("RTX4090-48GB", "default", "inference"): -0.37,
              ("RTX4090D-24GB", "default", "inference"): -0.30}


def _error(model: tuple[str, str], task: int) -> float:
    return throughput_table()[model][task] / TODAYS_TABLE[model][task] - 1


@pytest.mark.parametrize("model", sorted(TODAYS_TABLE))
def test_the_model_reproduces_todays_table_within_the_stated_error(model):
    for task, name, bound in ((0, "training", TRAINING_ERROR), (1, "inference", INFERENCE_ERROR)):
        error = _error(model, task)
        departure = DEPARTURES.get((*model, name))
        if departure is None:
            assert abs(error) <= bound, (model, name, error)
        else:
            assert error == pytest.approx(departure, abs=0.01), (model, name, error)


def test_the_reference_card_is_one_and_the_largest_errors_are_the_stated_ones():
    assert throughput_table()[("A100-80GB", "default")] == pytest.approx((1.0, 1.0))
    training = max(abs(_error(m, 0)) for m in TODAYS_TABLE)
    inference = max(abs(_error(m, 1)) for m in TODAYS_TABLE
                    if (*m, "inference") not in DEPARTURES)
    assert 0.09 < training <= TRAINING_ERROR       # stated, not loose: the A100 PCIe, +9.6 %
    assert 0.20 < inference <= INFERENCE_ERROR     # the H100 PCIe, -20.4 %


def test_every_catalogued_card_and_board_has_a_throughput_figure():
    table = throughput_table()
    for card in CARDS:
        for model in card.models:
            training, inference = table[(model, "default")]
            assert training > 0 and inference > 0, model
            assert card.spec_evidence, card.family
    assert len({m for m, _ in table}) == sum(len(c.models) for c in CARDS)


def test_no_catalogued_card_is_left_out_of_the_advice():
    """An offer of every catalogued model is sized: none is left out for want of a figure."""
    rows = [{**row(1.0, sku=model), "gpu_model": model, "vram_gb": float(model.split("-")[1][:-2])}
            for card in CARDS for model in card.models]
    excluded: Counter = Counter()
    for task in ("inference", "full-finetune"):
        workload = Workload.from_mapping({"params": "350M", "task": task, "hours_per_day": 1,
                                          "days": 1})
        advice = advise(workload, [Offer.from_row(r) for r in rows])
        excluded += advice.excluded
        assert {o.offer.gpu_model for o in advice.options} >= {
            r["gpu_model"] for r in rows if r["vram_gb"] >= advice.estimate.total_gb}
    assert not [reason for reason in excluded if "throughput" in reason or "catalog" in reason]


def test_a_pcie_board_uses_its_own_specifications():
    sxm, pcie = (Offer.from_row(row(1, gpu_model="H100-80GB", gpu_variant=v))
                 for v in ("SXM", "PCIe"))
    assert card_throughput(pcie, True) == pytest.approx(modeled_throughput(756, 2000, True))
    assert card_throughput(pcie, True) < card_throughput(sxm, True)


specs = st.tuples(st.floats(1, 5000), st.floats(50, 10000))


@given(specs, st.floats(1.01, 4), st.booleans())
def test_more_compute_or_bandwidth_never_makes_a_card_slower(spec, factor, training):
    tflops, gbs = spec
    base = modeled_throughput(tflops, gbs, training)
    assert modeled_throughput(tflops * factor, gbs, training) > base
    assert modeled_throughput(tflops, gbs * factor, training) > base


@given(specs)
def test_training_follows_compute_more_than_inference_does(spec):
    tflops, gbs = spec
    ratio = (tflops / 312) / (gbs / 2039)     # compute-rich against the reference, or not
    training, inference = (modeled_throughput(tflops, gbs, t) for t in (True, False))
    if ratio > 1.0001:
        assert training > inference
    elif ratio < 0.9999:
        assert training < inference
