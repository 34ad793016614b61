"""Like for like on real catalogs (issue 41 item 4): a pair matches in configuration (vCPUs,
memory, disk per GPU; or one SKU), a pair of two machines, of a machine not stated or outside its
plausible range (intermediate.int_pair_rules) is held with a reason in marts.held_pairs, and a
region is never its own reference. Each failure found on the real record is a case here: a server
of another CPU per GPU priced as a "discount", spot of an unstated machine, the US compared with
itself. Hand-made observations, every model built as in production."""

from __future__ import annotations

import pytest

from pipelines.warehouse.model_contract import audit_failures
from pipelines.warehouse.sql_models import load_models
from spiders.layout import SQL_DIR
from tests.helpers.observations import (
    EXTERNAL,
    SHANGHAI,
    ULANQAB,
    approx,
    build,
    obs,
    records,
    us,
)
from tests.workshop.truth import real_pairs

UNSTATED = {"vcpus": None, "memory_gib": None}


def server(price_per_gpu: float, **machine) -> dict:
    return obs(8 * price_per_gpu, gpu_count=8, sku="8x box", **machine)


def pair_rows(con, comparison: str) -> list[dict]:
    return records(con, "select sku, partner_sku, machine_config, held_reason, ratio "
                        "from intermediate.int_like_for_like_pairs "
                        f"where comparison = '{comparison}' order by sku")


# -- configuration: the machine per GPU, or one SKU -----------------------------------------------

@pytest.mark.parametrize(("server_machine", "single_machine", "held_reason"), [
    ({}, {}, None),                                     # 96 vCPUs / 8 = 12 per GPU, as the card
    ({"vcpus": 64}, {}, "configuration differs per GPU: vCPUs 8.0 vs 12.0"),
    ({"memory_gib": 1024}, {}, "configuration differs per GPU: memory 128.0 vs 96.0 GiB"),
    ({"vcpus": 64, "memory_gib": 1024}, {},
     "configuration differs per GPU: vCPUs 8.0 vs 12.0, memory 128.0 vs 96.0 GiB"),
    ({"disk_gb": 8000}, {"disk_gb": 500}, "configuration differs per GPU: disk 1000.0 vs 500.0 GB"),
    ({"disk_gb": 8000}, {}, "configuration not stated: one offer does not state its disk"),
    (UNSTATED, {}, "configuration not stated: one offer does not state its vCPUs and memory"),
    (UNSTATED, UNSTATED,
     "configuration not stated: neither offer states its vCPUs and memory"),
])
def test_a_server_pairs_only_with_a_single_card_of_its_machine_per_gpu(con, server_machine,
                                                                       single_machine,
                                                                       held_reason):
    build(con, [obs(60, sku="1x box", **single_machine), server(48, **server_machine)])
    [pair] = pair_rows(con, "multi_gpu")
    assert pair["held_reason"] == held_reason
    published = records(con, "select server_sku from marts.multi_gpu_discount")
    held = records(con, "select pair_key, held_reason from marts.held_pairs "
                        "where comparison = 'multi_gpu'")
    if held_reason is None:
        assert published == [{"server_sku": "8x box"}] and held == []
    else:
        assert published == []
        assert [h["held_reason"] for h in held] == [held_reason]


def test_a_server_prefers_the_single_card_of_its_machine_to_a_cheaper_other_one(con):
    build(con, [obs(40, sku="1x small", vcpus=4, memory_gib=32),     # cheaper, another machine
                obs(60, sku="1x box"), server(48)])
    [row] = records(con, "select single_offer_id, discount_pct from marts.multi_gpu_discount")
    assert row["single_offer_id"] == obs(60, sku="1x box")["offer_id"]
    assert row["discount_pct"] == approx(20.0)


@pytest.mark.parametrize(("spot_sku", "published"), [
    ("box", True),          # one SKU: the vendor's one instance type, stated machine or not
    ("spot box", False),    # the line only: two listings of unstated machines are no pair
])
def test_spot_of_an_unstated_machine_pairs_only_by_its_own_sku(con, spot_sku, published):
    build(con, [obs(30, sku="box", **UNSTATED),
                obs(9, sku=spot_sku, offer_kind="spot", **UNSTATED)])
    rows = records(con, "select spot_to_on_demand_ratio from marts.spot_discount")
    [pair] = pair_rows(con, "spot")
    if published:
        assert rows == [{"spot_to_on_demand_ratio": approx(0.3)}]
        assert pair["machine_config"] == "same_sku"
    else:
        assert rows == []
        assert pair["held_reason"] == ("configuration not stated: "
                                       "neither offer states its vCPUs and memory")


def test_a_slice_is_compared_per_gpu_with_the_whole_card(con):
    # a 1/4 slice with 3 vCPUs and 24 GiB is a quarter of the whole card's 12 and 96
    build(con, [obs(60), obs(20, gpu_fraction=0.25, sku="slice"),
                obs(21, gpu_fraction=0.25, sku="big slice", vcpus=12, memory_gib=96)])
    rows = {r["sku"]: r for r in pair_rows(con, "slice_to_whole")}
    assert rows["slice"]["held_reason"] is None
    assert rows["big slice"]["held_reason"] == ("configuration differs per GPU: "
                                                "vCPUs 48.0 vs 12.0, memory 384.0 vs 96.0 GiB")


# -- the plausible range --------------------------------------------------------------------------

@pytest.mark.parametrize(("per_gpu", "held_reason"), [
    (30, None),                                         # 0.5: the range's edge is in
    (29, "ratio 0.4833 outside the plausible range 0.5-1.5 (intermediate.int_pair_rules)"),
    (91, "ratio 1.5167 outside the plausible range 0.5-1.5 (intermediate.int_pair_rules)"),
])
def test_a_server_outside_the_plausible_range_is_held(con, per_gpu, held_reason):
    build(con, [obs(60, sku="1x box"), server(per_gpu)])
    [pair] = pair_rows(con, "multi_gpu")
    assert pair["held_reason"] == held_reason
    assert len(records(con, "select * from marts.multi_gpu_discount")) == (held_reason is None)


def test_the_rules_state_one_range_per_comparison_with_why(con):
    build(con, [])
    rules = records(con, "select * from intermediate.int_pair_rules order by comparison")
    assert [r["comparison"] for r in rules] == ["monthly_vs_hourly", "multi_gpu", "regional",
                                                "slice_to_whole", "spot"]
    assert all(0 < r["ratio_low"] < r["ratio_high"] and r["why"] for r in rules)


# -- regional: never its own reference ------------------------------------------------------------

def test_a_tier1_city_is_priced_against_the_other_tier1_cities_never_itself(con):
    build(con, [obs(60, sku="box"), obs(50, sku="box", **SHANGHAI),
                obs(45, sku="box", **ULANQAB)])
    rows = {r["region_group"]: r for r in records(con, "select * from marts.regional_discount")}
    assert rows["Beijing"]["reference_region_groups"] == ["Shanghai"]
    assert rows["Beijing"]["discount_pct"] == approx(100 * (1 - 60 / 50))
    assert rows["Shanghai"]["reference_region_groups"] == ["Beijing"]
    assert rows["Shanghai"]["discount_pct"] == approx(100 * (1 - 50 / 60))
    assert rows["Inner Mongolia"]["reference_region_groups"] == ["Beijing", "Shanghai"]
    assert rows["Inner Mongolia"]["discount_pct"] == approx(100 * (1 - 45 / 55))


def test_a_card_listed_only_in_the_reference_region_has_no_row_and_a_reason(con):
    build(con, [obs(30, vendor="Cloud", source="cloud", **us("Iowa", "us-central1")),
                obs(31, vendor="Cloud", source="cloud", **us("Ohio", "us-east-2"))])
    assert records(con, "select * from marts.regional_discount") == []
    assert records(con, "select comparison, region_group, held_reason from marts.held_pairs") == [
        {"comparison": "regional", "region_group": "US",
         "held_reason": "the region is the reference itself: no other region of the reference"}]


@pytest.mark.parametrize(("region_offer", "held_reason"), [
    ({"vcpus": 8}, "no offer of the vendor's line and configuration in the reference outside "
                   "the region"),
    # no machine stated: the SKU is the configuration, and the reference's is another
    (UNSTATED | {"sku": "nm box"}, "no offer of the vendor's line and configuration in the "
                                   "reference outside the region"),
    ({"price": 20}, "ratio 0.3333 outside the plausible range 0.5-2.0 "
                    "(intermediate.int_pair_rules)"),
])
def test_a_region_of_another_machine_or_implausible_gap_is_held(con, region_offer, held_reason):
    offer = {"sku": "box", **ULANQAB, **region_offer}
    build(con, [obs(60, sku="box"), obs(offer.pop("price", 45), **offer)])
    [row] = records(con, "select vendors_paired, discount_pct from marts.regional_discount "
                         "where region_group = 'Inner Mongolia'")
    assert row == {"vendors_paired": 0, "discount_pct": None}
    held = records(con, "select held_reason from marts.held_pairs "
                        "where region_group = 'Inner Mongolia'")
    assert held == [{"held_reason": held_reason}]


# -- the audits catch a self-comparison and an out-of-range pair ----------------------------------

def model(table: str):
    return next(m for m in load_models(SQL_DIR, EXTERNAL) if m.table == table)


@pytest.mark.parametrize(("table", "breakage", "audit"), [
    ("intermediate.int_like_for_like_pairs", "set partner_offer_id = offer_id", "not_itself"),
    ("intermediate.int_like_for_like_pairs", "set held_reason = null", "out_of_range"),
    ("marts.multi_gpu_discount", "set single_offer_id = server_offer_id", "not_itself"),
    ("intermediate.int_regional_pairs",
     "set reference_region_groups = [region_group] where price_ratio is not null",
     "own_reference"),
    ("intermediate.int_regional_pairs", "set price_ratio = 5 where price_ratio is not null",
     "out_of_range"),
    ("marts.regional_discount", "set reference_region_groups = [region_group]",
     "not_its_own_reference"),
])
def test_an_audit_catches_a_self_comparison_and_an_out_of_range_pair(con, table, breakage,
                                                                     audit):
    build(con, [obs(60, sku="1x box"), obs(45, sku="1x box", **ULANQAB), server(55),
                obs(8 * 20, gpu_count=8, sku="8x cheap")])   # 20 / 60: held, out of range
    assert audit_failures(con, model(table)) == []
    con.execute(f"update {table} {breakage}")
    assert audit in {f.audit for f in audit_failures(con, model(table))}


# -- the real-history score counts what a published mart breaks -----------------------------------

def test_the_real_pairs_score_counts_what_a_published_pair_breaks(con):
    build(con, [obs(60, sku="1x box"), server(48), obs(45, sku="1x box", **ULANQAB),
                obs(30, sku="1x box", vendor="Cloud", source="cloud", **us("Iowa", "us-1"))])
    clean = real_pairs.score(con)
    assert clean["multi_gpu.pairs"] == 1 and clean["regional.rows"] == 1
    assert clean["multi_gpu.discount_pct_min"] == clean["multi_gpu.discount_pct_max"] == 20.0
    assert {k: v for k, v in clean.items() if k.startswith("total.")} == {
        "total.out_of_range": 0, "total.machine_differs": 0, "total.machine_unknown": 0,
        "total.self_comparisons": 0}
    con.execute("update intermediate.int_offer_daily set vcpus = 64 where gpu_count = 8")
    con.execute("update marts.multi_gpu_discount set server_to_single_ratio = 0.2")
    con.execute("update marts.regional_discount set reference_region_groups = [region_group]")
    broken = real_pairs.score(con)
    assert (broken["multi_gpu.machine_differs"], broken["multi_gpu.out_of_range"],
            broken["regional.self_comparisons"]) == (1, 1, 1)


def test_a_database_from_before_the_reference_column_counts_a_region_in_its_reference():
    import pandas as pd
    rows = pd.DataFrame({"region_group": ["US", "Beijing", "Jiangsu"],
                         "region_in_reference": [True, True, False],
                         "out_of_range": [False, True, False],
                         "discount_pct": [0.0, -5.0, 20.0]})
    figures = real_pairs.regional_figures(rows)
    assert (figures["self_comparisons"], figures["us_rows"], figures["out_of_range"]) == (2, 1, 1)
    assert (figures["discount_pct_min"], figures["discount_pct_max"]) == (-5.0, 20.0)
