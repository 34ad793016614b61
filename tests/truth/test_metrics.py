"""make truth's scoring, on hand-made rows: recall and false-positive rates by what was injected,
error summaries, ratio errors and the claims count. The end-to-end mechanism (a tiny grid over
real offers) is in test_truth_grid.py."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from pipelines.verdicts import DOES_NOT_HOLD, HOLDS, NOT_ENOUGH_EVIDENCE
from tests.workshop.truth import grid, metrics


def groups(*rows: tuple[str, float, bool]) -> pd.DataFrame:
    """Groups as (category, injected size, holds?): a group that does not hold alternates
    between the two other verdicts, so only HOLDS may count."""
    other = (DOES_NOT_HOLD, NOT_ENOUGH_EVIDENCE)
    return pd.DataFrame([{"category": c, "dip_size_pct": s,
                          "dip_verdict": HOLDS if f else other[i % 2]}
                         for i, (c, s, f) in enumerate(rows)])


def test_recall_is_the_share_of_dipped_groups_signalled_per_size():
    frame = groups(("dip", 3, True), ("dip", 3, False), ("dip", 3, True), ("dip", 3, True),
                   ("dip", 8, True), ("noise", 0, True), ("trend", 0, False))
    assert metrics.dip_recall(frame) == {"3": 0.75, "8": 1.0}


def test_false_positive_rates_per_category_and_none_without_groups():
    frame = groups(("noise", 0, True), ("noise", 0, False), ("noise", 0, False),
                   ("noise", 0, False), ("trend", 0, False), ("fx", 0, True), ("dip", 5, True))
    rates = metrics.false_positive_rates(frame)
    assert rates == {"noise": 0.25, "trend": 0.0, "churn": None, "fx": 1.0}
    assert metrics.group_counts(frame) == {"dip": 1, "noise": 4, "trend": 1, "churn": 0, "fx": 1}


def test_month_recall_and_false_positives_count_complete_months():
    frame = pd.DataFrame([
        {"category": "dip", "dip_size_pct": 3, "complete_months": 2, "months_holding": 2},
        {"category": "dip", "dip_size_pct": 3, "complete_months": 2, "months_holding": 1},
        {"category": "dip", "dip_size_pct": 8, "complete_months": 0, "months_holding": 0},
        {"category": "noise", "dip_size_pct": 0, "complete_months": 4, "months_holding": 1},
        {"category": "fx", "dip_size_pct": 0, "complete_months": 0, "months_holding": 0}])
    assert metrics.month_recall(frame) == {"3": 0.75, "8": None}     # no complete month: None
    assert metrics.month_false_positive_rates(frame) == {
        "noise": 0.25, "trend": None, "churn": None, "fx": None}


def test_verdict_shares_tell_not_yet_from_no():
    frame = groups(("dip", 3, True), ("dip", 3, False), ("noise", 0, False), ("noise", 0, False))
    shares = metrics.verdict_shares(frame)
    assert shares["dip"] == {HOLDS: 0.5, DOES_NOT_HOLD: 0.0, NOT_ENOUGH_EVIDENCE: 0.5}
    assert shares["no dip"] == {HOLDS: 0.0, DOES_NOT_HOLD: 0.5, NOT_ENOUGH_EVIDENCE: 0.5}


@pytest.mark.parametrize(("errors", "median", "p95", "maximum"), [
    ([0.1, 0.3, 0.2], 0.2, 0.3, 0.3),
    ([1.0] * 19 + [9.0], 1.0, 1.0, 9.0),          # the 95th percentile ignores one outlier in 20
    ([0.5, float("nan"), None, 0.7], 0.6, 0.7, 0.7),
])
def test_error_summary(errors, median, p95, maximum):
    summary = metrics.error_summary(errors)
    assert summary["median"] == pytest.approx(median)
    assert summary["p95"] == pytest.approx(p95)
    assert summary["max"] == pytest.approx(maximum)


def test_share_within_a_bound():
    assert metrics.share_within([0.5, 1.5, 1.6, float("nan"), 3.0], 1.5) == 0.5
    assert metrics.share_within([], 1.5) is None


def test_error_summary_of_nothing_is_none():
    assert metrics.error_summary([]) == {"median": None, "p95": None, "max": None, "rows": 0}


def test_ratio_errors_are_relative_and_check_the_pairing():
    rows = pd.DataFrame([
        {"measure": "slice", "measured_ratio": 0.4, "injected_ratio": 0.4, "same_reference": True},
        {"measure": "slice", "measured_ratio": 0.42, "injected_ratio": 0.4,
         "same_reference": False},
        {"measure": "spot", "measured_ratio": 0.3, "injected_ratio": 0.3, "same_reference": None},
    ])
    out = metrics.ratio_errors(rows)
    assert out["slice"]["max"] == pytest.approx(0.05)
    assert out["slice"]["same_reference"] == 0.5
    assert out["spot"]["max"] == 0 and out["spot"]["same_reference"] == 0.0


def test_claims_summary_counts_rows_with_both_ends_of_an_interval():
    claims = pd.DataFrame([{"ci_low": 1.0, "ci_high": 2.0, "verdict": HOLDS},
                           {"ci_low": None, "ci_high": None, "verdict": NOT_ENOUGH_EVIDENCE},
                           {"ci_low": 1.0, "ci_high": math.nan, "verdict": NOT_ENOUGH_EVIDENCE},
                           {"ci_low": 3.0, "ci_high": 4.0, "verdict": DOES_NOT_HOLD}])
    assert metrics.claims_summary(claims) == {
        "claims_total": 4, "claims_with_interval": 2,
        "verdicts": {HOLDS: 1, NOT_ENOUGH_EVIDENCE: 2, DOES_NOT_HOLD: 1}}


def test_roles_rotate_with_the_seed_and_cover_every_role():
    sources = [f"s{i:02d}" for i in range(len(grid.ROLES))]
    first, second = grid.deal_roles(sources, 1), grid.deal_roles(sources, 2)
    assert sorted(first.values()) == sorted(grid.ROLES)
    assert first != second


def test_fx_swings_down_on_the_27th_and_back_on_the_2nd():
    from datetime import date
    moves = grid.fx_swings(date(2026, 1, 1), 59)           # January and February
    assert [(m.at.month, m.at.day, round(m.pct, 4)) for m in moves] == [
        (1, 27, -5.0), (2, 2, 5.2632), (2, 27, -5.0), (3, 2, 5.2632)]


def test_regional_summary_judges_rows_against_the_error_they_state():
    rows = pd.DataFrame([
        {"error_pp": 1.8, "error_bound_pp": 2.0, "vendors_paired": 1},    # within its bound
        {"error_pp": 0.4, "error_bound_pp": 1.4, "vendors_paired": 2},
        {"error_pp": 1.2, "error_bound_pp": 1.0, "vendors_paired": 3},    # beyond its bound
        {"error_pp": 0.1, "error_bound_pp": 1.0, "vendors_paired": 4}])
    summary = metrics.regional_summary(rows)
    assert summary["max"] == pytest.approx(1.8)
    assert summary["max_two_or_more_vendors"] == pytest.approx(1.2)
    assert summary["share_within_stated_bound"] == 0.75
    assert summary["share_within_1_5_pp"] == 0.75
    assert metrics.regional_summary(pd.DataFrame())["rows"] == 0
