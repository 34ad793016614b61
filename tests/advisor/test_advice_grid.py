"""A grid of workloads (the kinds of issue 42's Why: LoRA and full fine-tunes of 7B-72B models,
pre-training, INT4 and latency-bound inference, a parameter search, a deadline job, a 3D imaging
model; several regions and budgets) over one table of offers that holds a template, modeled,
undated and second-path offer beside real ones. Over every workload: no rank 1 a rule refuses;
the verdicts agree with the answer and each other; no template, modeled, undated or duplicated
offer by default; every line shows its price basis and as-of date."""

from __future__ import annotations

import pytest

from pipelines.advisor import Offer, Workload, advise
from pipelines.advisor.option_rules import TERM_PERIODS
from pipelines.cli.advise_rows import advise_rows
from tests.helpers.advisor_offers import row
from tests.helpers.observations import BEIJING, FRANKFURT, GUIAN, NANJING, SHANGHAI, ULANQAB

REAL = [
    row(30, "hour", sku="A100 按量", **BEIJING),
    row(9_000, "month", sku="A100 包月", **BEIJING),
    row(220, "hour", gpu_count=8, sku="A100 8卡", **BEIJING),
    row(60, "hour", gpu_model="H100-80GB", sku="H100", **BEIJING),
    row(15, "hour", gpu_fraction=0.5, sku="A100 1/2", **NANJING),
    row(400, "day", sku="A100 包天", **NANJING),
    row(6, "hour", offer_kind="spot", sku="A100 竞价", **ULANQAB),
    row(2.2, "hour", gpu_model="RTX4090-24GB", gpu_variant=None, sku="4090", **SHANGHAI),
    row(16, "hour", gpu_model="RTX4090-24GB", gpu_variant=None, gpu_count=8, sku="4090 8卡",
        **SHANGHAI),
    row(2.0, "hour", gpu_model="T4-16GB", gpu_variant=None, vram_gb=16, sku="T4", **GUIAN),
    row(250, "hour", gpu_model="H100-80GB", gpu_count=8, sku="H100 8x", source="cloud_de",
        vendor="DE Cloud", currency="EUR", **FRANKFURT),
]
# what the advisor must not show by default: a template (never counted), modeled and undated
# prices, and a second path (an archive) to the Beijing A100 its vendor's own source lists
NOT_BY_DEFAULT = [
    row(1, "hour", sku="template", source="idc_tpl", vendor="Template IDC", counted=False,
        reaches_via="template", price_basis="illustrative", price_as_of=None, **BEIJING),
    row(1.5, "hour", sku="modeled", source="idc_model", vendor="Model IDC",
        price_basis="illustrative", price_as_of=None, **NANJING),
    row(1.2, "hour", sku="undated", source="old_list", vendor="Old List", price_basis="undated",
        price_as_of=None, **SHANGHAI),
    row(29, "hour", sku="A100 按量", source="archive:idc_test", reaches_via="archive",
        **BEIJING),
]
HIDDEN = {"template", "modeled", "undated"}

GRID = [
    {"params": "7B", "task": "lora", "hours_per_day": 4, "days": 14},
    {"params": "13B", "task": "lora", "hours_per_day": 4, "days": 14},
    {"params": "13B", "task": "full-finetune", "hours_per_day": 24, "days": 7},
    {"params": "70B", "task": "lora", "hours_per_day": 8, "days": 10},
    {"params": "72B", "task": "qlora", "hours_per_day": 8, "days": 10},
    {"params": "72B", "task": "lora", "hours_per_day": 24, "days": 7},
    {"params": "7B", "task": "inference", "hours_per_day": 24, "days": 30},
    {"params": "7B", "task": "inference", "precision": "int4", "hours_per_day": 8, "days": 30},
    {"params": "70B", "task": "inference", "precision": "int8", "hours_per_day": 24, "days": 30},
    {"params": "7B", "task": "inference", "hours_per_day": 24, "days": 30, "qps": 50,
     "p99_ms": 30},
    {"params": "1B", "task": "pretrain", "hours_per_day": 24, "days": 30},
    {"params": "13B", "task": "full-finetune", "hours_per_day": 24, "days": 5,
     "gpu_hours": 1500, "deadline_days": 5},
    {"params": "7B", "task": "lora", "hours_per_day": 8, "days": 3, "runs": 8},
    {"params": "100M", "task": "full-finetune", "hours_per_day": 12, "days": 10,
     "peak_memory_gb": 30},                                    # a 3D imaging model, measured
    {"params": "13B", "task": "lora", "hours_per_day": 4, "days": 14, "interruptible": True},
    {"params": "13B", "task": "lora", "hours_per_day": 4, "days": 14, "region": "江苏"},
    {"params": "7B", "task": "lora", "hours_per_day": 2, "days": 5, "region": "Inner Mongolia",
     "interruptible": True},
    {"params": "7B", "task": "inference", "hours_per_day": 24, "days": 30, "region": "贵州"},
    {"params": "13B", "task": "full-finetune", "hours_per_day": 24, "days": 3, "region": "DE"},
    {"params": "7B", "task": "lora", "hours_per_day": 1, "days": 1},
    {"params": "7B", "task": "lora", "hours_per_day": 20, "days": 60},
    {"params": "34B", "task": "lora", "hours_per_day": 24, "days": 30, "utilisation": 0.5,
     "project_months": 6},
]


def _advice(spec: dict, include_modeled: bool = False):
    table = [Offer.from_row(r) for r in REAL + NOT_BY_DEFAULT]
    return advise(Workload.from_mapping(spec), table, include_modeled=include_modeled)


def _consistent(advice) -> list[str]:
    """What in the verdicts contradicts the answer (empty: nothing)."""
    answer, v = advice.answer, {x.rule: x.verdict for x in advice.verdicts}
    problems = []
    if (v["whole card vs slice"] == "slice") != answer.offer.is_slice:
        problems.append("whole card vs slice")
    if (v["exclusive vs shared"] == "shared") != answer.offer.is_slice:
        problems.append("exclusive vs shared")
    if v["single vs multi-GPU"].startswith("single") != (answer.cards == 1):
        problems.append("single vs multi-GPU")
    if v["spot"] == "not allowed" and answer.offer.offer_kind == "spot":
        problems.append("spot")
    if (v["monthly vs hourly"] == "monthly") != (answer.offer.billing_period in TERM_PERIODS):
        problems.append("monthly vs hourly")
    return problems


@pytest.mark.parametrize("spec", GRID, ids=lambda s: "-".join(str(x) for x in s.values()))
def test_every_workload_of_the_grid(spec):
    advice = _advice(spec)
    skus = {o.offer.sku for o in advice.options}
    assert not skus & HIDDEN and "template" not in skus
    assert sum(o.offer.sku == "A100 按量" and o.offer.vendor == "Test IDC"
               and o.kind == "whole card" for o in advice.options) <= 1   # once, not twice
    assert all(o.offer.source != "archive:idc_test" for o in advice.options)
    allowed = [bool(o.refused_by) for o in advice.options]
    assert allowed == sorted(allowed)                      # every refused option below the line
    if advice.answer is not None:
        assert not advice.answer.refused_by
        assert _consistent(advice) == [], spec
    rows, columns = advise_rows(advice, None)
    assert "price_basis" in columns
    assert all(", as of 2026-11-30" in r["price_basis"] for r in rows)
    assert all(r["rank"] is None for r in rows if r["refused_by"])


def test_most_of_the_grid_has_an_answer_and_the_rules_refuse_some_options():
    advices = [_advice(spec) for spec in GRID]
    assert len(GRID) >= 20
    assert sum(a.answer is not None for a in advices) >= 18
    assert sum(any(o.refused_by for o in a.options) for a in advices) >= 3


def test_modeled_and_undated_prices_only_when_asked_and_never_a_template():
    spec = {"params": "7B", "task": "lora", "hours_per_day": 4, "days": 14}
    default, asked = _advice(spec), _advice(spec, include_modeled=True)
    assert not {o.offer.sku for o in default.options} & HIDDEN
    shown = {o.offer.sku for o in asked.options}
    assert {"modeled", "undated"} <= shown and "template" not in shown
    rows, _ = advise_rows(asked, None)
    assert any(r["price_basis"] == "modeled, undated (1 d)" or
               r["price_basis"].startswith("modeled, undated") for r in rows)
