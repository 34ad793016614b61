"""marts.market_claims' verdicts: each of the three read from the interval of the median, what a
missing verdict lacks and how many distinct offers it would need (an overlapping interval's
estimate worked out by hand), no verdict from illustrative prices, and on a real run's database
every verdict one of pipelines.verdicts.VERDICTS. Hand-made observations, every model built
unchanged (`build` of tests/helpers); the scorecard's helpers are those of test_market_claims."""

from __future__ import annotations

from math import sqrt

import pytest

from pipelines.verdicts import DOES_NOT_HOLD, HOLDS, NOT_ENOUGH_EVIDENCE, VERDICTS
from tests.helpers.observations import approx, build, obs
from tests.sql.test_market_claims import CLAIM_IDS, claims, vendors

# -- verdicts read from the interval -----------------------------------------------------------

@pytest.mark.parametrize("prices, verdict, lacking, interval", [
    ([55, 60, 62, 65, 70], HOLDS, None, (55, 70)),            # n = 5: min..max covers 93.75 %
    ([20, 25, 30, 35, 40], DOES_NOT_HOLD, None, (20, 40)),
    ([45, 55, 60, 65, 70], NOT_ENOUGH_EVIDENCE, "interval overlaps the range", (45, 70)),
    ([55, 60, 62, 65], NOT_ENOUGH_EVIDENCE, "too few offers", (55, 65)),   # n = 4: 87.5 % only
])
def test_each_verdict_comes_from_the_interval(con, prices, verdict, lacking, interval):
    row = claims(build(con, vendors(prices)))["a100_80gb_beijing_hourly"]
    assert (row["verdict"], row["evidence_lacking"]) == (verdict, lacking)
    assert row["verdict"] in VERDICTS
    assert (row["ci_low"], row["ci_high"]) == interval
    assert (row["distinct_offers"], row["vendors"], row["min_distinct_offers"]) == (
        len(prices), len(prices), 5)
    assert row["median_value"] == approx(sorted(prices)[len(prices) // 2]
                                         if len(prices) % 2 else 61.0)
    assert row["ci_coverage"] == approx(0.9375 if len(prices) == 5 else 0.875)
    if lacking == "too few offers":
        assert row["reason"].startswith("only 4 distinct offers (minimum 5)")
        assert row["distinct_offers_needed"] == 5
    if lacking is None:                                   # a verdict: nothing more is needed
        assert row["distinct_offers_needed"] is None


# -- what an overlapping interval would need ---------------------------------------------------

@pytest.mark.parametrize("prices, needed", [
    # median 60, interval 45-70 against 50-80: the lower half-width 15 must shrink to the 10
    # between the median and 50: n' = 5 x (15/10)^2 = 11.25, so 12
    ([45, 55, 60, 65, 70], 12),
    # median 82 above 80, interval 70-90: the lower half-width 12 must shrink below the 2 to
    # 80 (strictly outside): n' > 5 x 36 = 180, so 181
    ([70, 80, 82, 85, 90], 181),
    # median 45 below 50, interval 40-55: the upper half-width 10 below the 5 to 50:
    # n' > 5 x 4 = 20, so 21
    ([40, 42, 45, 50, 55], 21),
    # median 65 inside, interval 40-95 overlaps both edges: the larger ratio wins,
    # lower 25/15, upper 30/15 = 2: n' = 5 x 4 = 20
    ([40, 60, 65, 70, 95], 20),
])
def test_an_overlapping_interval_says_how_many_offers_would_clear_the_edge(con, prices, needed):
    row = claims(build(con, vendors(prices)))["a100_80gb_beijing_hourly"]
    assert (row["verdict"], row["evidence_lacking"]) == (NOT_ENOUGH_EVIDENCE,
                                                         "interval overlaps the range")
    assert row["distinct_offers_needed"] == needed > row["distinct_offers"]
    assert row["reason"] == ("the interval of the median overlaps the edge of the expected "
                             f"range: at the present median about {needed} distinct offers "
                             "(now 5) would narrow it clear of the edge")


@pytest.mark.parametrize("prices", [[45, 48, 50, 60, 70], [40, 45, 80, 85, 90]])
def test_a_median_on_the_edge_needs_no_count_it_cannot_reach(con, prices):
    """The median at 50 (or 80): a narrower interval still holds the edge, so no n clears it."""
    row = claims(build(con, vendors(prices)))["a100_80gb_beijing_hourly"]
    assert (row["verdict"], row["evidence_lacking"], row["distinct_offers_needed"]) == (
        NOT_ENOUGH_EVIDENCE, "interval overlaps the range", None)
    assert "the median sits on that edge" in row["reason"]


def shrunk_like_the_estimate(n: int) -> list[float]:
    """n offers around the median 60 of the overlap case (interval 45-70 at n = 5) whose
    interval's half-widths have shrunk like 1/sqrt(n): ranks 3 and n - 2 (exact for n = 11, 12)
    at 60 - 15 sqrt(5/n) and 60 + 10 sqrt(5/n), two offers beyond each, the rest at 60."""
    low, high = 60 - 15 * sqrt(5 / n), 60 + 10 * sqrt(5 / n)
    return [round(v, 2) for v in [low - 2, low - 1, low, *[60] * (n - 6), high, high + 1,
                                  high + 2]]


@pytest.mark.parametrize("n, verdict, needed", [
    (11, NOT_ENOUGH_EVIDENCE, 12),    # 60 - 15 sqrt(5/11) = 49.89: still below 50
    (12, HOLDS, None),                # the estimate's n: 60 - 15 sqrt(5/12) = 50.32 clears it
])
def test_at_the_estimated_count_a_shrinking_interval_clears_the_edge(con, n, verdict, needed):
    prices = shrunk_like_the_estimate(n)
    row = claims(build(con, vendors(prices)))["a100_80gb_beijing_hourly"]
    assert (row["ci_low"], row["median_value"]) == (prices[2], 60.0)
    assert (row["verdict"], row["distinct_offers_needed"]) == (verdict, needed)


def _basis(con, source: str, basis: str | None) -> None:
    """The latest crawl of `source` says its prices are `basis` (None: says nothing)."""
    con.execute("insert into raw.crawls (crawl_id, source, mode, passed, status, offers, "
                "finished_at, price_basis) values (?, ?, 'replay', true, 'passed', 1, now(), ?)",
                [f"basis-{source}", source, basis])


ILLUSTRATIVE_ONLY = (NOT_ENOUGH_EVIDENCE, "illustrative prices only")


@pytest.mark.parametrize("bases, verdict, illustrative", [
    (["illustrative"] * 5, ILLUSTRATIVE_ONLY, 5),
    (["illustrative"] * 3 + ["mixed"] * 2, ILLUSTRATIVE_ONLY, 5),   # part modeled is not real
    (["illustrative"] * 4 + ["published"], (HOLDS, None), 4),        # one real offer: a verdict
    (["undated"] * 5, ILLUSTRATIVE_ONLY, 5),         # a price of no known date is not real
    (["undated"] * 4 + ["captured"], (HOLDS, None), 4),
    (["illustrative"] * 4 + [None], (HOLDS, None), 4),               # unstated: not withheld
    (["live"] * 5, (HOLDS, None), 0),
    (["illustrative"] * 3, ILLUSTRATIVE_ONLY, 3),          # says why, not just "too few offers"
])
def test_no_verdict_from_illustrative_prices_alone(con, bases, verdict, illustrative):
    for i, basis in enumerate(bases):
        _basis(con, f"idc_{i}", basis)
    row = claims(build(con, vendors([55, 60, 62, 65, 70][:len(bases)])))[
        "a100_80gb_beijing_hourly"]
    assert ((row["verdict"], row["evidence_lacking"]), row["illustrative_offers"]) == (
        verdict, illustrative)
    assert row["distinct_offers"] == len(bases)
    if verdict == ILLUSTRATIVE_ONLY:
        # one real-priced offer more lets the interval speak, and never fewer than 5 in all
        needed = max(5, len(bases) + 1)
        assert row["distinct_offers_needed"] == needed
        assert row["reason"] == (f"all {len(bases)} distinct offers have no real price "
                                 "(modeled or undated): no verdict until real prices land "
                                 f"(a verdict needs {needed} distinct offers, at least one of "
                                 "them real-priced)")
        assert (row["ci_low"], row["median_value"]) != (None, None)   # the figures stay shown


def test_interval_of_ten_by_hand(con):
    """n = 10: P(X <= 1) = 11/1024 <= 0.05 < P(X <= 2) = 56/1024, so the interval runs from the
    2nd to the 9th value and covers 1 - 2 x 11/1024 = 97.85 %. The two extremes (40 and 90, far
    outside 50-80) fall outside it: the claim holds for the typical offer."""
    row = claims(build(con, vendors([90, 52, 40, 56, 58, 60, 62, 64, 66, 54])))[
        "a100_80gb_beijing_hourly"]
    assert (row["ci_low"], row["ci_high"], row["median_value"]) == (52.0, 66.0, 59.0)
    assert row["ci_coverage"] == approx(1 - 22 / 1024)
    assert row["ci_method"] == "order statistics, exact binomial"
    assert row["verdict"] == "holds"


def test_open_ended_range_holds_from_its_lower_bound(con):
    rows = []
    for i, saving in enumerate([25, 30, 22, 40, 35]):               # monthly vs 60 CNY/h hourly
        place = {"vendor": f"Vendor {i}", "source": f"idc_{i}"}
        rows += [obs(60, **place), obs(60 * 730 * (1 - saving / 100), billing_period="month",
                                       **place)]
    row = claims(build(con, rows))["monthly_package_saving"]
    assert (row["ci_low"], row["ci_high"], row["expected_high"]) == (22.0, 40.0, None)
    assert row["verdict"] == "holds"


# -- on the database of a real run -------------------------------------------------------------

def test_every_verdict_of_a_built_database_is_one_of_the_three(snapshot_run):
    """`gpuprices run` over the bundled snapshots: every claim gets one of pipelines.verdicts'
    three words, and a missing verdict always says what it lacks and (unless the median sits on
    an edge) how many distinct offers would give one, more than it has."""
    from tests.helpers.runs import query
    assert snapshot_run.returncode == 0, snapshot_run.stdout[-2000:] + snapshot_run.stderr[-2000:]
    rows = query(snapshot_run.data_dir, "select verdict, evidence_lacking, distinct_offers, "
                                        "distinct_offers_needed, reason from marts.market_claims")
    assert len(rows) == len(CLAIM_IDS)
    for verdict, lacking, offers, needed, reason in rows:
        assert verdict in VERDICTS
        assert (verdict == NOT_ENOUGH_EVIDENCE) == (lacking is not None), reason
        if lacking is not None and "sits on that edge" not in reason:
            assert needed > offers, reason
