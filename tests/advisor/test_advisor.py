"""The advisor (pipelines/advisor/) on fixed price tables: memory, costs, regions, profiles.

The worked examples of the issue: 4 h/day for 14 days on an exclusive A100 80 GB at 400 CNY/day
is 5,600 CNY (daily billing); a 1/2 instance at 14 CNY/h rents for 784 CNY over the 56 hours, and
delivers only 0.5 × 0.75 of an A100's work: the options are ranked by the cost of finishing the
work (56 A100-hours), so the half runs 149.3 h. The guides' own examples: test_guide_examples.py.

Its asset and `gpuprices advise`, over a database built with the SQL models: test_advise_command.py.
"""

from __future__ import annotations

import pytest

from pipelines.advisor import (
    AdvisorError,
    Link,
    Offer,
    Workload,
    advise,
    estimate_memory,
    interconnect,
    model_parallel_efficiency,
    parse_params,
    parse_profiles,
    region_predicate,
)
from pipelines.advisor.configurations import NO_CLUSTER
from pipelines.defs.advisor import DEFAULT_WORKLOADS, load_profiles
from tests.helpers.advisor_offers import row
from tests.helpers.observations import NANJING, ULANQAB


def offers(*rows: dict) -> list[Offer]:
    return [Offer.from_row(r) for r in rows]


def work(**spec) -> Workload:
    base = {"params": "13B", "task": "lora", "hours_per_day": 4, "days": 14}
    return Workload.from_mapping({**base, **spec})


# -- 1. the memory estimate ----------------------------------------------------------------------

@pytest.mark.parametrize("text, value", [("13B", 13e9), ("13b", 13e9), ("7e9", 7e9),
                                         ("70B", 70e9), ("350M", 350e6), ("130亿", 13e9),
                                         ("1.5T", 1.5e12), (7_000_000_000, 7e9)])
def test_parameter_counts_as_users_write_them(text, value):
    assert parse_params(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["13 parsecs", "", "B13", "0.1"])
def test_a_parameter_count_that_is_not_one_is_refused(text):
    with pytest.raises(AdvisorError):
        parse_params(text)


@pytest.mark.parametrize("task, precision, bytes_per_param", [
    ("full-finetune", "bf16", 16.0),   # mixed-precision Adam
    ("pretrain", "bf16", 16.0),
    ("full-finetune", "fp32", 16.0),   # fp32 Adam: 4 + 4 + 8
    ("inference", "bf16", 2.0),
    ("inference", "fp32", 4.0),
    ("inference", "int8", 1.0),
    ("inference", "int4", 0.5),
    ("lora", "bf16", 2.16),            # bf16 base + 1 % adapters × 16 B
    ("qlora", "int4", 0.71),           # 4-bit base with constants 0.55 + adapters 0.16
])
def test_memory_rules_per_parameter(task, precision, bytes_per_param):
    estimate = estimate_memory(work(params="7B", task=task, precision=precision))
    assert estimate.bytes_per_param == pytest.approx(bytes_per_param)
    assert estimate.weights_gb == pytest.approx(7 * bytes_per_param)
    assert estimate.margin == pytest.approx(0.20)             # default hints: 2,048 tokens
    assert estimate.total_gb == pytest.approx(7 * bytes_per_param * 1.2)


def test_the_estimate_states_its_assumptions():
    estimate = estimate_memory(work(params="13B", task="full-finetune"))
    text = " ".join(estimate.assumptions)
    assert estimate.total_gb == pytest.approx(13 * 16 * 1.2)
    assert "16 B/param" in text and "+20%" in text and "Adam" in text


def test_long_sequences_and_batches_raise_the_margin():
    short = estimate_memory(work(task="inference", batch_size=1, seq_len=4096))
    long = estimate_memory(work(task="inference", batch_size=8, seq_len=4096))  # 3 doublings
    huge = estimate_memory(work(task="inference", batch_size=64, seq_len=32768))
    assert short.margin == pytest.approx(0.20)
    assert long.margin == pytest.approx(0.50)
    assert huge.margin == pytest.approx(1.00)                 # capped
    assert long.total_gb == pytest.approx(26 * 1.5)


@pytest.mark.parametrize("task, precision", [("full-finetune", "int4"), ("pretrain", "int8"),
                                             ("lora", "int4")])
def test_a_task_and_precision_that_do_not_go_together_are_refused(task, precision):
    with pytest.raises(AdvisorError, match="qlora"):
        estimate_memory(work(task=task, precision=precision))


def test_task_and_precision_spellings():
    assert work(task="全量微调", precision="fp16").task == "full-finetune"
    assert work(task="全量微调", precision="fp16").precision == "bf16"
    assert work(task="推理").task == "inference"
    with pytest.raises(AdvisorError, match="unknown task"):
        work(task="distill")


# -- 2./3. the worked examples of the issue ---------------------------------------------------

def test_exclusive_a100_at_400_a_day_for_4_hours_a_day_over_14_days_is_5600():
    advice = advise(work(), offers(row(400, "day")))
    best = advice.options[0]
    assert best.kind == "whole card"
    assert best.offer.billing_period == "day"
    assert best.billing.units == 14
    assert best.cost_cny == pytest.approx(5600)
    assert best.cost_usd == pytest.approx(800)                # the row's own FX: 7 CNY per USD
    assert best.wall_hours == pytest.approx(56)
    assert any("14 days × 400.00 CNY/day" in line for line in best.why)


def test_half_a100_rents_for_784_over_56_hours_at_14_an_hour_and_finishes_the_work_for_more():
    slice_15 = advise(work(), offers(row(15, "hour", gpu_fraction=0.5))).options[0]
    slice_14 = advise(work(), offers(row(14, "hour", gpu_fraction=0.5))).options[0]
    assert slice_15.kind == "slice"
    assert slice_14.rent_per_hour_cny * 56 == pytest.approx(784)   # the guide's figure: rent
    # the work (56 A100-hours) on half the card at 75 % → 0.375 of an A100: 149.3 h to finish
    assert slice_15.throughput == pytest.approx(0.375)
    assert slice_15.wall_hours == pytest.approx(56 / 0.375)
    assert slice_15.billing.units == pytest.approx(56 / 0.375)
    assert slice_15.cost_cny == pytest.approx(15 * 56 / 0.375)
    assert slice_15.work_gpu_hours == pytest.approx(56)
    assert slice_15.cny_per_work_hour == pytest.approx(40)
    assert any("0.75 shared-card speed" in line for line in slice_15.why)


def test_the_cheapest_billing_of_a_rental_is_chosen_for_the_usage_pattern():
    rental = dict(sku="A100 80G 整卡")
    table = offers(row(110, "hour", **rental), row(400, "day", **rental),
                   row(10_000, "month", **rental))
    part_time = advise(work(), table)                         # 56 h over 14 days
    assert len(part_time.options) == 1                        # one rental, its cheapest billing
    assert part_time.options[0].offer.billing_period == "day"
    assert part_time.options[0].cost_cny == pytest.approx(5600)      # hourly 6,160, monthly 10,000
    assert part_time.options[0].alternatives == ("hour: 6,160 CNY", "month: 10,000 CNY")
    light = advise(work(hours_per_day=1, days=14), table).options[0]
    assert (light.offer.billing_period, light.cost_cny) == ("hour", pytest.approx(1540))
    full_month = advise(work(hours_per_day=20, days=30), table).options[0]
    assert full_month.offer.billing_period == "month"
    assert full_month.cost_cny == pytest.approx(10_000)
    two_months = advise(work(hours_per_day=20, days=31), table).options[0]
    assert two_months.cost_cny == pytest.approx(12_400)       # 31 days beats 2 started months


def test_the_choice_changes_when_the_model_no_longer_fits_the_slice():
    table = offers(row(15, "hour", gpu_fraction=0.5),                    # 40 GB slice
                   row(30, "hour", gpu_fraction=0.25, sku="quarter"),    # 20 GB slice
                   row(45, "hour", sku="whole"),                         # 80 GB card
                   row(400, "hour", gpu_count=8, sku="server"))  # the vendor lists 8-card servers
    fits = advise(work(params="13B"), table)                  # 33.7 GB
    assert fits.options[0].kind == "slice"
    assert fits.options[0].offer.gpu_fraction == 0.5
    assert fits.excluded["does not fit the slice"] == 1        # not the 20 GB quarter
    too_big = advise(work(params="70B"), table)               # 181 GB: no slice, no single card
    assert "slice" not in too_big.best_per_kind
    assert "whole card" not in too_big.best_per_kind
    best = too_big.options[0]
    assert best.kind == "multi-GPU" and best.parallelism == "model-parallel"
    assert best.cards == 4 and best.rentals == 4               # 181.4 / 80 → 3 → 4 (power of two)
    # n × the single-card offer, 4 cards at 75 % each over NVLink finish 56 A100-hours in 18.7 h
    assert best.cost_cny == pytest.approx(4 * 45 * 56 / 3)
    assert best.need_gb_per_card == pytest.approx(70 * 2.16 * 1.2 / 4)
    assert best.interconnect == "NVLink 600 GB/s within one server" and not best.across_servers
    assert any("4 cards free in one of its servers of up to 8 cards" in w for w in best.why)


def test_a_full_finetune_that_fits_no_card_goes_multi_gpu_and_a_server_offer_is_that_offer():
    table = offers(row(45, "hour", sku="single"),
                   row(280, "hour", gpu_count=8, sku="8-GPU server", region_code="北京8卡"))
    one_card = advise(work(params="3B", task="full-finetune"), table)   # 57.6 GB: one card fits
    assert one_card.options[0].kind == "whole card"
    assert one_card.excluded[
        "more cards than the workload needs (give --gpu-hours to weigh speed)"] == 1
    server = advise(work(params="30B", task="full-finetune"), table)    # 576 GB: 8 × 80 GB
    best = server.options[0]
    assert best.kind == "multi-GPU" and best.cards == 8
    assert best.offer.sku == "8-GPU server" and best.rentals == 1
    # the server offer as listed: 8 cards at 70 % each finish 56 A100-hours in 10 h
    assert best.cost_cny == pytest.approx(280 * 10)
    singles = next(o for o in server.options if o.offer.sku == "single")
    assert singles.cards == 8 and singles.cost_cny == pytest.approx(8 * 45 * 10)
    # 1,344 GB: 16.8 cards → 32, four servers: the vendor states no cluster interconnect
    big = advise(work(params="70B", task="full-finetune"), table)
    assert big.options == []
    assert big.excluded == {NO_CLUSTER: 2}


def test_spot_only_when_the_workload_can_be_interrupted():
    table = offers(row(20, "hour", sku="on demand"),
                   row(8, "hour", offer_kind="spot", sku="spot"))
    strict = advise(work(), table)
    assert [o.offer.offer_kind for o in strict.options] == ["on_demand"]
    assert strict.excluded["spot, and the workload cannot be interrupted"] == 1
    relaxed = advise(work(interruptible=True), table)
    assert relaxed.options[0].kind == "spot"
    assert relaxed.options[0].cost_cny == pytest.approx(8 * 56 * 1.1)   # +10 % for restarts
    assert relaxed.best_per_kind["whole card"].offer.sku == "on demand"
    # with a given amount of work, restarts cost 10 % more time (and so more hours paid)
    timed = advise(work(interruptible=True, gpu_hours=40), table)
    spot = timed.best_per_kind["spot"]
    assert spot.wall_hours == pytest.approx(44)
    assert spot.cost_cny == pytest.approx(8 * 44)
    assert timed.best_per_kind["whole card"].wall_hours == pytest.approx(40)


def test_spot_that_is_not_the_cheapest_is_not_chosen():
    table = offers(row(20, "hour", sku="on demand"), row(25, "hour", offer_kind="spot", sku="s"))
    advice = advise(work(interruptible=True), table)
    assert advice.options[0].kind == "whole card"
    assert advice.best_per_kind["spot"].cost_cny == pytest.approx(25 * 56 * 1.1)


def test_wall_time_follows_throughput_and_the_deadline_can_call_for_more_cards():
    table = offers(row(10, "hour", sku="a100"),
                   row(30, "hour", gpu_model="H100-80GB", sku="h100"),
                   row(200, "hour", gpu_count=8, sku="a100 server"))   # A100 servers of 8
    advice = advise(work(gpu_hours=100), table)    # 100 A100-hours; 56 h available in 14 days
    by_sku = {}
    for option in advice.options:
        by_sku.setdefault((option.offer.sku, option.cards), option)
    assert ("a100", 1) not in by_sku                           # 100 h > 4 h/day × 14 days
    assert by_sku[("a100", 2)].parallelism == "data-parallel"
    assert by_sku[("a100", 2)].wall_hours == pytest.approx(100 / 1.9)   # 2 cards: 1.9×
    assert by_sku[("a100", 2)].days_used == 14
    h100 = 1 / (0.75 / (989 / 312) + 0.25 / (3350 / 2039))    # the model: 2.57 × A100 training
    assert by_sku[("h100", 1)].wall_hours == pytest.approx(100 / h100)
    assert advice.options[0].offer.sku == "a100"               # 2 × 10 × 52.6 h < 30 × 38.9 h
    # the vendor lists no H100 server: 2, 4 or 8 H100s are not on sale together
    assert ("h100", 2) not in by_sku
    tight = advise(work(gpu_hours=200, days=2), table)         # 8 h: not even 8 × A100 finishes
    assert tight.options == []
    assert tight.excluded["does not finish within 2 days at 4 h/day"] == 3


@pytest.mark.parametrize(("overrides", "name", "fast"), [
    ({}, "NVLink 600 GB/s", True),                                         # A100 SXM
    ({"gpu_variant": "PCIe"}, "PCIe (PCIe board)", False),
    ({"gpu_model": "H800-80GB"}, "NVLink 400 GB/s, below the 600 GB/s of a fast link", False),
    ({"gpu_model": "H100-80GB"}, "NVLink 900 GB/s", True),
    ({"gpu_model": "RTX4090-24GB", "gpu_variant": None}, "PCIe (no NVLink)", False),
    ({"gpu_model": "L40S-48GB", "gpu_variant": None, "vram_gb": 48.0}, "PCIe (no NVLink)", False),
    ({"gpu_variant": None}, "unknown: the listing names no board, assumed PCIe-class", False),
])
def test_the_link_between_a_servers_cards_comes_from_the_board_and_the_catalog(
        overrides, name, fast):
    link = interconnect(offers({**row(1), **overrides})[0])
    assert (link.name, link.fast) == (name, fast)


def test_model_parallel_efficiency_by_link_and_across_servers():
    fast, slow = Link("NVLink", True), Link("PCIe", False)
    assert model_parallel_efficiency(2, fast) == pytest.approx(0.80)
    assert model_parallel_efficiency(2, slow) == pytest.approx(0.80 * 0.70)
    assert model_parallel_efficiency(8, fast) == pytest.approx(0.70)       # guides: 60-75 %
    assert model_parallel_efficiency(5, slow) == pytest.approx(0.70 * 0.70)  # 5 cards: 8's
    assert model_parallel_efficiency(32, fast, across_servers=True) == pytest.approx(0.50)
    one_card = advise(work(params="30B"), offers(row(10))).options[0]       # 77.8 GB fits 80
    assert one_card.cards == 1
    two = advise(work(params="40B"), offers(
        row(10), row(10, gpu_variant="PCIe", sku="p"),
        row(80, gpu_count=8, sku="s8"), row(80, gpu_count=8, gpu_variant="PCIe", sku="p8")))
    nvlink = next(o for o in two.options if o.offer.sku == "A100-80GB 1x1 on_demand")
    pcie_option = next(o for o in two.options if o.offer.sku == "p")
    assert nvlink.cards == pcie_option.cards == 2
    assert nvlink.throughput == pytest.approx(2 * 0.80)
    pcie_card = 1 / (0.75 + 0.25 / (1935 / 2039))              # A100 80 GB PCIe: 1,935 GB/s
    assert pcie_option.throughput == pytest.approx(pcie_card * 2 * 0.80 * 0.70)
    assert pcie_option.interconnect == "PCIe (PCIe board) within one server"


def test_sold_out_offers_and_cards_outside_the_catalog_are_left_out():
    table = offers(row(5, available=False, sku="gone"), row(9, sku="here"),
                   {**row(1, sku="b200"), "gpu_model": "B200-192GB", "vram_gb": 192},
                   {**row(1, sku="mystery"), "gpu_model": "X999-80GB"})
    advice = advise(work(), table)
    assert [o.offer.sku for o in advice.options] == ["b200", "here"]   # B200 has its figure
    assert advice.excluded == {"sold out": 1, "X999-80GB is not in the card catalog": 1}


# -- the region filter ----------------------------------------------------------------------

def _regional_table() -> list[Offer]:
    return offers(row(10, sku="bj"), row(12, sku="nj", **NANJING), row(8, sku="im", **ULANQAB))


@pytest.mark.parametrize("text", ["江苏", "Jiangsu", "jiangsu", "江苏省"])
def test_region_in_chinese_and_english(text):
    advice = advise(work(region=text), _regional_table())
    assert [o.offer.sku for o in advice.options] == ["nj"]
    assert advice.region_note == "province/state Jiangsu"
    assert advice.excluded["outside province/state Jiangsu"] == 2


@pytest.mark.parametrize("text, sku", [("内蒙古", "im"), ("Inner Mongolia", "im"), ("北京", "bj"),
                                       ("Ulanqab", "im"), ("乌兰察布", "im")])
def test_other_regions_and_cities(text, sku):
    assert [o.offer.sku for o in advise(work(region=text), _regional_table()).options] == [sku]


def test_an_unknown_region_is_refused_with_the_known_provinces():
    with pytest.raises(AdvisorError, match="Jiangsu"):
        region_predicate("Atlantis", _regional_table())


def test_region_group_is_the_province_in_china_and_the_country_elsewhere():
    nj, us = offers(row(1, **NANJING), row(1, region_code="eastus", country="US",
                                           province_or_state="Virginia", city=None))
    assert (nj.region_group, us.region_group) == ("Jiangsu", "US")


# -- saved profiles --------------------------------------------------------------------------

def test_the_bundled_workload_profiles_are_valid():
    workloads, errors = load_profiles(DEFAULT_WORKLOADS)
    assert errors == []
    assert len(workloads) >= 3 and len({w.name for w in workloads}) == len(workloads)


def test_bad_profiles_are_reported_one_by_one_and_the_good_ones_kept():
    text = """
workloads:
  - {name: ok, params: 13B, task: lora, hours_per_day: 4, days: 14}
  - {name: typo, params: 13B, task: loar, hours_per_day: 4, days: 14}
  - {name: ok, params: 7B, task: inference, hours_per_day: 4, days: 14}
  - {name: int4-full, params: 7B, task: full-finetune, precision: int4, hours_per_day: 4, days: 1}
  - {params: 7B, task: inference, hours_per_day: 4, days: 14}
"""
    workloads, errors = parse_profiles(text, "w.yaml")
    assert [w.name for w in workloads] == ["ok"]
    assert len(errors) == 4
    assert "profile typo: unknown task 'loar'" in errors[0]
    assert "same name" in errors[1] and "qlora" in errors[2] and "needs a `name`" in errors[3]
    with pytest.raises(AdvisorError, match=r"w.yaml"):
        parse_profiles("workloads: 3", "w.yaml")
