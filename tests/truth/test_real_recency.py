"""The recency part of `make truth-real` (tests/workshop/truth/real_recency.py) on a small built
database: per rule, the rows of the "now" views that are older than the horizon or behind their
own record's newest data, and the published cheapest offers, which follow the rule of "now"."""

from __future__ import annotations

from datetime import timedelta

import duckdb
import pytest

from pipelines.warehouse.db import ensure_schema
from pipelines.warehouse.price_age import price_horizon_days
from tests.helpers.observations import DAY, TODAY, build, obs
from tests.workshop.truth import real_recency

EARLIER = DAY - timedelta(days=40)
OLD = DAY - timedelta(days=price_horizon_days() + 10)


@pytest.fixture(scope="module")
def figures():
    with duckdb.connect() as con:
        ensure_schema(con)
        build(con, [obs(10, vendor="Listed", source="crawl", sku="listed"),
                    obs(5, vendor="Delisted", source="crawl", sku="gone", observed_at=EARLIER),
                    obs(9, vendor="Tracker A", source="tracker:a"),
                    obs(4, vendor="Left the tracker", source="tracker:b", observed_at=EARLIER),
                    obs(3, vendor="Old", source="old", observed_at=OLD)])
        yield real_recency.score(con, on_day=TODAY)


def test_without_a_rule_now_holds_old_and_delisted_rows(figures):
    assert figures["latest_prices.all"] == {
        "rows": 5, "older_than_horizon": 1, "behind_newest_over_30d": 3,
        "behind_newest_over_1y": 0, "behind_own_record_over_30d": 2,
        "behind_own_record_over_lag": 2}


def test_the_horizon_alone_keeps_the_delisted_rows(figures):
    horizon = figures["latest_prices.horizon"]
    assert horizon["rows"] == 4 and horizon["older_than_horizon"] == 0
    assert horizon["behind_own_record_over_lag"] == 2


def test_the_rule_of_now_leaves_both_out_and_the_mart_follows_it(figures):
    now = figures["cheapest_offers.now"]
    assert now["rows"] == 2 and now["older_than_horizon"] == 0
    assert now["behind_own_record_over_lag"] == 0
    assert figures["cheapest_offers.published"] == now
    assert figures["reference_day"] == TODAY.isoformat() and figures["listing_lag_days"] == 7
