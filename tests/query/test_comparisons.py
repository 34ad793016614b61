"""Why a comparison signal is empty (pipelines/query/comparisons.py): the offers on each side of
each comparison among the counted latest prices a filter matches, and the words that say whether
there was nothing to compare or nothing to compare with."""

from __future__ import annotations

import duckdb
import pytest

from pipelines.query.comparisons import (
    no_signal_rows_reason,
    nothing_to_compare,
    signal_candidates,
)
from pipelines.query.filters import Filter
from pipelines.warehouse.db import ensure_schema
from tests.helpers.observations import build, obs


@pytest.fixture
def built():
    with duckdb.connect() as con:
        ensure_schema(con)
        yield con


def test_the_candidates_of_each_comparison(built):
    con = built
    build(con, [obs(62), obs(20, offer_kind="spot", sku="spot"),
                obs(9000, billing_period="month", sku="month"),
                obs(15, gpu_fraction="0.25", sku="quarter"),
                obs(400, gpu_count=8, sku="eight")])
    assert signal_candidates(con) == {"offers": 5, "slices": 1, "spot": 1, "monthly": 1,
                                      "multi_gpu": 1, "hourly_whole": 2}
    spot_only = Filter()
    spot_only.add("offer_kind = ?", ["spot"])
    assert signal_candidates(con, spot_only)["offers"] == 1


@pytest.mark.parametrize(("candidates", "side", "text"), [
    ({"hourly_whole": 0}, "hourly_whole",
     "No hourly on-demand whole-card prices among the latest prices: nothing to compare."),
    ({"hourly_whole": 3}, "hourly_whole",
     "None of the 3 hourly on-demand whole-card prices among the latest prices has a reference "
     "region of the same card to compare with."),
    ({"monthly": 2}, "monthly", "None of the 2 monthly offers among the latest prices has an "
                                "hourly offer of the same line and day to compare with."),
])
def test_nothing_to_compare(candidates, side, text):
    assert nothing_to_compare(candidates, side) == text


@pytest.mark.parametrize(("candidates", "text"), [
    ({"offers": 0}, "no counted latest offer matches"),
    ({"offers": 3, "spot": 1, "hourly_whole": 2},
     "3 counted latest offers match (0 slice offers, 1 spot offers, 0 monthly offers, "
     "0 multi-GPU servers, 2 hourly on-demand whole-card prices), but none has a comparable "
     "offer (a slice and its whole card, spot and on-demand, ...) on the same day"),
])
def test_no_signal_rows_names_what_matched(candidates, text):
    assert no_signal_rows_reason(candidates) == text
