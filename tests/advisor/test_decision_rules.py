"""The guides' decision rules as verdicts (pipelines/advisor/decision_rules.py), each on workloads
built to fall on either side of its rule, and the figures behind them: efficiency.toml and the
price claims it cites from the scorecard's one home."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.advisor import Offer, Workload, advise, estimate_memory, verdicts
from pipelines.advisor import efficiency as efficiency_module
from pipelines.advisor.efficiency import (
    cited_claims,
    claim_ranges,
    efficiency,
    explain_lines,
    parse_efficiency,
)
from tests.helpers.advisor_offers import row

_TOML = Path(efficiency_module.__file__).with_name("efficiency.toml").read_text(encoding="utf-8")
CARD = row(45, sku="A100 80G")                                        # an 80 GB card
HALF = row(15, gpu_fraction=0.5, sku="1/2 A100")                      # a 40 GB slice
QUARTER = row(8, gpu_fraction=0.25, sku="1/4 A100")                   # a 20 GB slice


def verdict_of(rule: str, spec: dict, rows: list[dict] = (CARD, HALF), measured=None):
    base = {"params": "13B", "task": "lora", "hours_per_day": 4, "days": 14}
    workload = Workload.from_mapping({**base, **spec})
    table = [Offer.from_row(r) for r in rows]
    found = verdicts(workload, estimate_memory(workload), table, [], measured)
    return next(v for v in found if v.rule == rule)


# -- whole card vs slice ---------------------------------------------------------------------

@pytest.mark.parametrize(("spec", "rows", "verdict", "because"), [
    ({"params": "7B", "task": "inference"}, (CARD, HALF), "slice",
     "21% of a card of 80 GB (< 40%)"),
    ({}, (CARD, HALF), "slice first, then whole", "fits the 40 GB slice"),        # 33.7 GB, 42 %
    ({}, (CARD, QUARTER), "whole card", "above the largest slice, 20 GB"),
    ({}, (CARD,), "whole card", "no slice is offered"),
    # 27B LoRA: 70.0 GB fits a 70.5 GB half H200 but is 87 % of a card: the 80 % rule alone
    ({"params": "27B"}, (CARD, {**row(40, gpu_fraction=0.5, sku="h"), "gpu_model": "H200-141GB",
                               "vram_gb": 70.5}),
     "whole card", "87% of a card of 80 GB (> 80%) with 27B params"),
    # a 1B full fine-tune (19.2 GB) is small; round the clock for 3 days it is a long dense run
    ({"params": "1B", "task": "full-finetune", "hours_per_day": 24, "days": 3}, (CARD, HALF),
     "whole card", "compute-dense full-finetune running 72 h (> 24 h)"),
    ({"params": "1B", "task": "full-finetune", "hours_per_day": 8, "days": 3}, (CARD, HALF),
     "slice", "24% of a card"),
])
def test_whole_card_or_slice(spec, rows, verdict, because):
    found = verdict_of("whole card vs slice", spec, list(rows))
    assert found.verdict == verdict
    assert because in found.because


def test_the_slice_verdict_states_the_budget_of_both_when_both_fit():
    workload = Workload.from_mapping({"params": "13B", "task": "lora", "hours_per_day": 4,
                                      "days": 14})
    advice = advise(workload, [Offer.from_row(r) for r in (CARD, HALF)])
    found = advice.verdicts[0]
    # the cost of finishing 56 A100-hours: 149.3 h × 15 on the half, 56 h × 45 on the card
    assert ("budget: the cheapest slice 2,240 CNY, the cheapest whole card 2,520 CNY"
            in found.because)
    alone = advise(workload, [Offer.from_row(CARD)]).verdicts[0]
    assert "budget" not in alone.because


# -- exclusive vs shared: two of four ------------------------------------------------------

@pytest.mark.parametrize(("spec", "verdict", "held"), [
    ({"params": "7B", "task": "inference", "interruptible": True}, "shared", 0),
    ({"params": "7B", "task": "inference"}, "shared", 1),                # no interruption only
    ({"params": "7B", "task": "inference", "hours_per_day": 10}, "exclusive", 2),
    ({"params": "70B", "interruptible": True}, "exclusive", 2),          # 181 GB: memory, 4 cards
    ({"params": "70B", "hours_per_day": 12}, "exclusive", 4),
])
def test_exclusive_when_two_of_the_four_hold(spec, verdict, held):
    found = verdict_of("exclusive vs shared", spec)
    assert found.verdict == verdict
    assert len(found.holds) == held == found.figures["conditions_held"]
    assert found.because.startswith(f"{held} of 4 hold")
    if verdict == "shared":
        assert "about 75% of an exclusive one (guides 70%-80%)" in found.because


def test_the_conditions_that_hold_are_named_with_the_users_numbers():
    found = verdict_of("exclusive vs shared", {"params": "70B", "interruptible": True})
    assert found.holds == ("memory 181.4 GB > 80% of a card of 80 GB",
                           "model parallel over 4 cards (≥ 2)")
    assert "not: run 4 h > 8 h; cannot tolerate interruption" in found.because


# -- single vs multi-GPU ---------------------------------------------------------------------

B200 = {**row(200, sku="b200"), "gpu_model": "B200-180GB", "vram_gb": 180.0}


@pytest.mark.parametrize(("spec", "rows", "verdict", "because"), [
    ({}, (CARD,), "single card", "fits one card (33.7 of 80 GB); no --gpu-hours"),
    ({"gpu_hours": 50}, (CARD,), "single card", "finish in the 56 h available"),
    ({"params": "60B"}, (CARD,), "multi-GPU (model parallel)",
     "at least 2 cards model parallel, each at 80% over a fast link (56% over PCIe)"),
    ({"params": "60B"}, (CARD, B200), "single card", "fits one card (155.5 of 180 GB)"),
    ({"params": "70B", "task": "full-finetune"}, (CARD,), "multi-GPU (model parallel)",
     "at least 32 cards model parallel, each at 50% across servers, over a cluster "
     "interconnect a vendor states"),
    ({"gpu_hours": 100}, (CARD,), "multi-GPU (data parallel)",
     "need 1.79× one A100-80GB: data parallel on 2 cards, planned at 1.9×"),
    ({"gpu_hours": 300}, (CARD,), "multi-GPU (data parallel)",
     "data parallel on 8 cards, planned at 7× (guides 7× or more)"),
    ({"gpu_hours": 180}, (CARD,), "multi-GPU (data parallel)",
     "data parallel on 4 cards, planned at 3.6× (guides 2-3.6×)"),
    ({"gpu_hours": 500}, (CARD,), "multi-GPU (data parallel)", "faster cards or more days"),
])
def test_single_card_first_then_multi_gpu(spec, rows, verdict, because):
    found = verdict_of("single vs multi-GPU", spec, list(rows))
    assert found.verdict == verdict
    assert because in found.because


# -- spot, monthly vs hourly ---------------------------------------------------------------

def test_spot_only_for_work_that_checkpoints():
    measured = {"spot_share_of_regular": {"median_value": 31.0, "verdict": "not enough evidence"}}
    allowed = verdict_of("spot", {"interruptible": True}, measured=measured)
    refused = verdict_of("spot", {})
    assert (allowed.verdict, refused.verdict) == ("allowed", "not allowed")
    assert "+10% time for restarts" in allowed.because
    assert "spot at 16-24 % of on-demand" in refused.because
    assert "measured median 31 (not enough evidence)" in allowed.because
    assert "not measured on today's prices" in refused.because


@pytest.mark.parametrize(("hours_per_day", "days", "verdict"), [
    (20, 30, "monthly"),                  # 600 h ≥ 584 h: the break-even at a 20 % saving
    (19.5, 30, "monthly"),                # 585 h
    (19.4, 30, "hourly (or daily)"),      # 582 h
    (24, 20, "hourly (or daily)"),        # 480 h: the month is not used enough
    (8, 60, "hourly (or daily)"),
])
def test_monthly_pays_off_past_the_break_even_of_the_guides_saving(hours_per_day, days, verdict):
    found = verdict_of("monthly vs hourly", {"hours_per_day": hours_per_day, "days": days})
    assert found.verdict == verdict
    assert "against 584 h, the break-even of a monthly package saving 20% on 730 h" in \
        found.because


def test_the_monthly_verdict_counts_the_hours_the_cheapest_option_runs():
    workload = Workload.from_mapping({"params": "13B", "task": "lora", "hours_per_day": 24,
                                      "days": 30, "gpu_hours": 100})
    advice = advise(workload, [Offer.from_row(CARD)])
    found = next(v for v in advice.verdicts if v.rule == "monthly vs hourly")
    assert found.verdict == "hourly (or daily)" and found.because.startswith("100 h used")
    assert "the answer is billed per hour" in found.because


def test_every_advice_carries_the_five_verdicts_in_order():
    advice = advise(Workload.from_mapping({"params": "7B", "task": "inference",
                                           "hours_per_day": 2, "days": 3}),
                    [Offer.from_row(CARD)])
    assert [v.rule for v in advice.verdicts] == ["whole card vs slice", "exclusive vs shared",
                                                 "single vs multi-GPU", "spot",
                                                 "monthly vs hourly"]
    assert all(v.because and v.rule_text for v in advice.verdicts)


# -- the figures: one home each --------------------------------------------------------------

def test_the_cited_price_claims_are_the_scorecards_own():
    claims = cited_claims()
    assert (claims["spot_share"].expected_low, claims["spot_share"].expected_high) == (16, 24)
    assert (claims["monthly_saving"].expected_low,
            claims["monthly_saving"].expected_high) == (20, None)
    assert claims["quarter_slice_share"].expected_low == pytest.approx(100 / 3)
    assert len(claim_ranges()) >= 19       # the whole claims CTE is read, not a few figures


def test_the_efficiency_figures_sit_inside_the_guides_ranges():
    e = efficiency()
    assert e.slice_guides[0] <= e.slice_speed <= e.slice_guides[1]
    assert e.model_parallel_guides_8[0] <= e.model_parallel_per_card[8] \
        <= e.model_parallel_guides_8[1]
    low, high = e.data_parallel_guides[4]
    assert low <= e.data_parallel_speedup[4] <= high
    assert e.data_parallel_speedup[8] >= e.data_parallel_guides[8][0]
    assert 1 - e.link_loss_guides[1] <= e.slow_link_factor <= 1 - e.link_loss_guides[0]


def test_explain_lists_every_figure_with_its_source():
    lines = explain_lines()
    assert len(lines) == 11 and all("[" in line or "claim" in line for line in lines)
    assert any("spot_share_of_regular: 16-24" in line for line in lines)


@pytest.mark.parametrize(("old", "new"), [
    ("speed_share = 0.75", "speed_share = 1.5"),                # a share above one
    ("time_overhead = 1.10", "time_overhead = 0.9"),             # a spot overhead below one
    ("speedup = { 2 = 1.9,", "speedup = { 2 = 2.5,"),            # faster than its card count
    ("fast_link_gbs = 600\n", ""),                                # a figure missing
])
def test_a_bad_efficiency_file_is_refused(old, new):
    assert old in _TOML
    with pytest.raises((ValueError, KeyError)):
        parse_efficiency(_TOML.replace(old, new))
