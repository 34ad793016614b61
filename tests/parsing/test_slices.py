"""spiders/parsing/slices.py: a slice or count an API serves as numbers, read by normalization."""
from decimal import Decimal

import pytest

from pipelines.normalize.offer import normalize_offer
from pipelines.normalize.quarantine import Quarantined
from spiders.parsing.gpu_models import GpuParseError
from spiders.parsing.slices import PlanGpus, plan_gpus, served_fraction


@pytest.mark.parametrize("card, memory, unit, expected", [
    ("A100", 4, "GB", PlanGpus(1, Decimal(4), Decimal(4))),       # a slice of the 80 GB card
    ("A100", 80, "GB", PlanGpus(1, None, Decimal(80))),
    ("A100", 81920, "MiB", PlanGpus(1, None, Decimal(80))),        # the unit converted here
    ("L40S", 96, "GB", PlanGpus(2, None, Decimal(48))),            # two whole cards
    ("MI300X", 192, "GB", PlanGpus(1, None, Decimal(192))),
    ("L40S", 72, "GB", PlanGpus(None, None, Decimal(72))),         # neither: no count
    ("A16", 2, "GB", PlanGpus(1, None, Decimal(2))),               # unknown card: as one
])
def test_plan_memory_says_slice_or_count(card, memory, unit, expected):
    assert plan_gpus(card, memory, unit) == expected


@pytest.mark.parametrize("memory, unit", [(4, "TB"), (0, "GB"), ("four", "GB"), (4, "")])
def test_plan_memory_that_is_no_size_raises(memory, unit):
    with pytest.raises(GpuParseError):
        plan_gpus("A100", memory, unit)


@pytest.mark.parametrize("value, expected", [
    (0.25, (1, 4)), ("0.5", (1, 2)), (0.125, (1, 8)), (0.75, (3, 4))])
def test_served_fraction(value, expected):
    assert served_fraction(value) == expected


def test_served_fraction_not_a_number_raises():
    with pytest.raises(GpuParseError):
        served_fraction("a quarter")


BASE = {"source": "vultr", "vendor": "Vultr", "vendor_kind": "gpu_cloud", "sku": "vcg-x",
        "region_text": "ewr",
        "offer_kind": "on_demand", "url": "https://api.vultr.com/v2/plans", "raw_ref": "x",
        "observed_at": "2026-07-01T00:00:00+00:00", "price_amount": "0.5", "currency": "USD",
        "billing_period": "hour"}


@pytest.mark.parametrize("fields, model, fraction, count", [
    ({"gpu_text": "A100", "plan_vram": 20, "plan_vram_unit": "GB"}, "A100-80GB", "0.25", 1),
    ({"gpu_text": "L40S", "plan_vram": 96, "plan_vram_unit": "GB"}, "L40S-48GB", "1", 2),
    ({"gpu_text": "Tesla T4", "gpu_count": 1, "gpu_fraction": 0.25}, "T4-16GB", "0.25", 1),
])
def test_normalization_reads_the_served_slice(fields, model, fraction, count):
    row = normalize_offer({**BASE, **fields})
    assert (row["gpu_model"], row["gpu_fraction"], row["gpu_count"]) == (
        model, Decimal(fraction), count)


@pytest.mark.parametrize("fields", [
    {"gpu_text": "Tesla T4", "gpu_count": 1, "gpu_fraction": 0.3},      # not in eighths
    {"gpu_text": "Tesla T4 1/2", "gpu_count": 1, "gpu_fraction": 0.25},  # the text says another
    {"gpu_text": "Tesla T4", "gpu_count": 1, "gpu_fraction": 2},         # not below one card
    {"gpu_text": "L40S", "plan_vram": 72, "plan_vram_unit": "GB"},       # no L40S plan
    {"gpu_text": "A100", "plan_vram": 4, "plan_vram_unit": "PB"},        # unit not known
])
def test_a_served_slice_that_cannot_be_read_is_quarantined(fields):
    with pytest.raises(Quarantined) as caught:
        normalize_offer({**BASE, **fields})
    assert caught.value.stage == "card"
