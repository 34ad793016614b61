"""The regional discount over a trailing window, and the error it states (issue 25, item 6).

A line's ratio is the median of its paired days of the last 14; error_bound_pp is 2 x the assumed
+/- 1 % wander of a list price (or the wander the market's lines or the paired vendors' own showed
over 28 days, if larger), over sqrt(vendors paired). Hand-made observations, every model built as
in production (tests/helpers/observations.py).
"""

from __future__ import annotations

import math
import statistics
from datetime import timedelta

import pytest

from tests.helpers.observations import DAY, GUIAN, approx, build, obs, records

FLOOR_PP = 2.0          # 2 x the assumed +/- 1 % wander of one list price


def vendor(i: int) -> dict:
    return {"vendor": f"Vendor {i}", "source": f"vendor_{i}", "vendor_kind": "gpu_cloud"}


def line_history(ratios: dict[int, float | None], who: dict, reference: float = 100.0) -> list:
    """The vendor's Beijing card at `reference` and its Guizhou card at ratio x reference, on the
    day `days_ago` before DAY for each {days_ago: ratio}; None: Guizhou listed, Beijing not."""
    rows = []
    for days_ago, ratio in ratios.items():
        at = DAY - timedelta(days=days_ago)
        if ratio is None:
            rows.append(obs(80, observed_at=at, **who, **GUIAN))
            continue
        rows += [obs(reference, observed_at=at, **who),
                 obs(round(reference * ratio, 6), observed_at=at, **who, **GUIAN)]
    return rows


def guizhou(con, day=DAY, gpu_model="A100-80GB") -> dict:
    [row] = records(con, "select * from marts.regional_discount where region_group = 'Guizhou' "
                         f"and day = date '{day.date()}' and gpu_model = '{gpu_model}'")
    return row


@pytest.mark.parametrize("vendors", [1, 2, 3, 4])
def test_a_new_install_states_a_discount_on_its_first_day(con, vendors):
    build(con, [r for i in range(vendors) for r in line_history({0: 0.8}, vendor(i))])
    row = guizhou(con)
    assert row["discount_pct"] == approx(20.0)
    assert row["window_days"] == 1 and row["vendors_paired"] == vendors
    # one day shows no wander: the assumed one, narrowed by the median over the vendors
    assert row["error_bound_pp"] == approx(FLOOR_PP / math.sqrt(vendors))


@pytest.mark.parametrize(("ratios", "window"), [
    ({2: 0.70, 1: 0.90, 0: 0.80}, [0.70, 0.90, 0.80]),
    # day 14 is outside the window (the day and the 13 before): its 0.5 does not vote
    ({14: 0.50, 13: 0.82, 5: 0.84, 0: 0.80}, [0.82, 0.84, 0.80]),
    # a day the reference is missing is not a paired day and does not vote
    ({3: 0.78, 2: None, 1: 0.82, 0: 0.81}, [0.78, 0.82, 0.81]),
    ({d: 0.80 + 0.001 * d for d in range(20)}, [0.80 + 0.001 * d for d in range(14)]),
])
def test_a_lines_ratio_is_the_median_of_its_paired_days_in_the_window(con, ratios, window):
    build(con, line_history(ratios, vendor(0)))
    row = guizhou(con)
    assert row["discount_pct"] == approx(100 * (1 - statistics.median(window)), rel=1e-9)
    assert row["window_days"] == len(window)
    [line] = records(con, "select * from intermediate.int_regional_line_window "
                          f"where observed_date = date '{DAY.date()}' and region_group = 'Guizhou'")
    assert line["price_ratio"] == approx(ratios[0])               # the day's own ratio beside it
    assert line["window_ratio"] == approx(statistics.median(window))


def test_earlier_pairs_do_not_give_a_day_without_a_reference_a_discount(con):
    build(con, line_history({3: 0.8, 2: 0.8, 1: 0.8, 0: None}, vendor(0)))
    row = guizhou(con)
    assert row["discount_pct"] is None and row["error_bound_pp"] is None
    assert (row["vendors"], row["vendors_paired"], row["window_days"]) == (1, 0, None)
    assert guizhou(con, DAY - timedelta(days=1))["discount_pct"] == approx(20.0)


@pytest.mark.parametrize(("ratios", "bound"), [
    # the ratio moved from 0.74 to 0.86 within 28 days: half that range is 6 pp
    ({20: 0.74, 10: 0.86, 0: 0.80}, 6.0),
    # a move of 0.5 pp only: the assumed wander stays the bound
    ({20: 0.800, 10: 0.805, 0: 0.80}, FLOOR_PP),
    # day 28 is outside the wander's window (the day and the 27 before)
    ({28: 0.50, 27: 0.80, 0: 0.80}, FLOOR_PP),
])
def test_the_stated_error_widens_with_the_wander_seen(con, ratios, bound):
    build(con, line_history(ratios, vendor(0)))
    assert guizhou(con)["error_bound_pp"] == approx(bound, rel=1e-6)


def test_a_quiet_vendor_borrows_the_wander_the_market_shows(con):
    """Slow movers have not shown their wander yet; the market's 90th percentile of the lines'
    wander is the least any row states, so a steady line in Guizhou carries a busy market's."""
    busy = [r for i in range(1, 11) for r in line_history({20: 0.70, 10: 0.90, 0: 0.80},
                                                           vendor(i) | {"gpu_model": "H100-80GB"})]
    build(con, [*line_history({20: 0.8, 10: 0.8, 0: 0.8}, vendor(0)), *busy])
    steady = guizhou(con)
    assert steady["discount_pct"] == approx(20.0)
    assert steady["error_bound_pp"] == approx(10.0, rel=1e-6)    # the busy lines' half range


def test_the_stated_error_narrows_with_the_vendors_paired(con):
    rows = [r for i in range(4) for r in line_history({10: 0.74, 0: 0.86}, vendor(i))]
    build(con, rows)
    row = guizhou(con)
    assert row["vendors_paired"] == 4
    assert row["error_bound_pp"] == approx(6.0 / math.sqrt(4), rel=1e-6)
