"""The index's scores on real histories (tests/workshop/truth/real_index.py): the regression
reference (time-product dummy, vendors equal on each day) and the errors against it, on
hand-made closes and on a small published index."""

from __future__ import annotations

import math
from datetime import date, timedelta

import pandas as pd
import pytest

from pipelines.index import read_rules
from tests.helpers.index_history import Offer, connect, flat, load, publish
from tests.workshop.truth.index_reference import day_effects
from tests.workshop.truth.real_index import score

DAY = date(2026, 7, 8)


def closes(prices: dict[tuple[str, str], list[float | None]]) -> pd.DataFrame:
    return pd.DataFrame([{"offer_id": offer, "vendor": vendor, "index_date":
                          DAY + timedelta(days=i), "price": p}
                         for (vendor, offer), path in prices.items()
                         for i, p in enumerate(path) if p is not None])


@pytest.mark.parametrize("prices, expected", [
    # every offer every day: the vendors' geometric mean, each vendor's offers averaged first
    ({("A", "a1"): [10, 9], ("A", "a2"): [20, 18], ("B", "b"): [5, 5]}, [1, math.sqrt(0.9)]),
    # a move and its reversal: back to 1
    ({("A", "a"): [1, 1.8, 1], ("B", "b"): [2, 2, 2]}, [1, math.sqrt(1.8), 1]),
    # an offer seen once says nothing; a day linked to no other is left out
    ({("A", "a"): [10, 10, None], ("B", "b"): [4, 4, None], ("C", "c"): [None, None, 7]},
     [1, 1]),
])
def test_the_reference_is_the_regression_over_all_days(prices, expected):
    assert list(day_effects(closes(prices))) == pytest.approx(expected)


def test_the_reference_values_a_missing_vendor_at_its_average():
    # B is missing on day 2 and dearer from day 3 on: the regression imputes it on day 2 at its
    # average, so day 2 is not day 1 (an index that cannot see the future keeps day 1's level)
    reference = day_effects(closes({("A", "a"): [10, 10, 10, 10], ("B", "b"): [10, None, 20, 20]}))
    assert reference.iloc[1] > 1 and reference.iloc[2] == pytest.approx(math.sqrt(2))


def test_the_published_index_scores_against_the_reference():
    con = connect()
    offers = [Offer("Alpha", "a", [10, 10, 18, 10, 10, 10], currency="USD",
                    overrides={"source": "gpu-rental-prices:alpha"}),
              Offer("Bravo", "b", flat(10, 6), currency="USD",
                    overrides={"source": "gpu-rental-prices:bravo"}),
              Offer("Charlie", "c", flat(12, 6), currency="USD")]
    load(con, offers)
    publish(con)
    figures = score(con)
    assert figures["method_version"] == read_rules(con).method_version
    history = figures["histories"]["gpu-rental-prices"]
    assert history["days"] == 6 and history["scored"] == 5     # the last day is still open
    assert history["index_error_pp_max"] == pytest.approx(0, abs=1e-3)
    assert history["median_error_pp_max"] > 1                  # the median moves with the mix
