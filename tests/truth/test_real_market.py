"""The real histories' own figures (tests/workshop/truth/real_market.py) on a hand-made daily
series: vendors entering and leaving, moves that reverse within 2 days (and one that does not),
the listing median's moves; an archive dated by edits is left out."""

from __future__ import annotations

from datetime import date, timedelta

import duckdb
import pytest

from tests.workshop.truth import real_market

DAY = date(2026, 7, 1)


def offer_rows(source: str, vendor: str, offer: str, prices: list[float | None]) -> list[tuple]:
    """One row per day with a price (None: not listed that day)."""
    return [(source, vendor, offer, DAY + timedelta(days=i), p, "on_demand", p, "H100")
            for i, p in enumerate(prices) if p is not None]


@pytest.fixture
def con():
    c = duckdb.connect()
    c.execute("create schema raw; create schema intermediate")
    c.execute("create table raw.crawls (source varchar, calendar_signal boolean)")
    c.execute("insert into raw.crawls values ('daily:a', true), ('daily:b', true), "
              "('daily:c', true), ('edits:a', false), ('crawled', null)")
    c.execute("create table intermediate.int_offer_daily (source varchar, vendor varchar, "
              "offer_id varchar, observed_date date, close_price_amount decimal(18, 6), "
              "offer_kind varchar, close_price_usd_per_gpu_hour decimal(18, 6), "
              "gpu_model varchar)")
    rows = (offer_rows("daily:a", "A", "a1", [1.0, 1.8, 1.0, 1.0, 1.0])   # reverses next day
            + offer_rows("daily:a", "A", "a2", [2.0, 2.0, 2.5, 2.5, 2.5])  # a lasting move
            + offer_rows("daily:b", "B", "b1", [3.0, 3.0, 3.0, None, None])  # leaves on day 4
            + offer_rows("daily:c", "C", "c1", [None, None, 4.0, 4.0, 4.0])  # enters on day 3
            + offer_rows("edits:a", "A", "e1", [5.0, 9.0, 5.0, 5.0, 5.0])
            + offer_rows("crawled", "D", "d1", [6.0, 7.0, 6.0, 6.0, 6.0]))
    c.executemany("insert into intermediate.int_offer_daily values (?, ?, ?, ?, ?, ?, ?, ?)",
                  rows)
    yield c
    c.close()


def test_only_calendar_dated_archives_are_scored(con):
    assert list(real_market.score(con)) == ["daily"]


def test_vendors_entering_and_leaving(con):
    churn = real_market.score(con)["daily"]["vendor_churn"]
    assert churn == {"days": 4, "vendors_median": 2.0, "entering_total": 1,
                          "leaving_total": 1, "days_with_entry_or_exit": 2,
                          "entering_max": 1, "leaving_max": 1}


def test_a_move_that_returns_within_two_days_is_a_reversal(con):
    reversals = real_market.score(con)["daily"]["reversals"]
    # a1: up then back (2 moves, the first reversed: back the next day; the back-move itself is
    # not, the price never returns to 1.8); a2: one lasting move
    assert reversals == {"moves": 3, "reversals": 1, "reversal_share": round(1 / 3, 4),
                         "offers_with_reversal": 1}


@pytest.mark.parametrize(("prices", "reversals"), [
    ([1.0, 1.8, 1.8, 1.0], 1),        # back within 2 days
    ([1.0, 1.8, 1.8, 1.8, 1.0], 0),   # back after 3 days: a move, not a reversal
    ([1.0, 1.8, 2.0, 1.0], 1),        # two moves, back to the first price within 2 days
])
def test_reversal_window(prices, reversals):
    c = duckdb.connect()
    c.execute("create schema raw; create schema intermediate")
    c.execute("create table raw.crawls as select 'daily:a' as source, true as calendar_signal")
    c.execute("create table intermediate.int_offer_daily (source varchar, vendor varchar, "
              "offer_id varchar, observed_date date, close_price_amount decimal(18, 6), "
              "offer_kind varchar, close_price_usd_per_gpu_hour decimal(18, 6), "
              "gpu_model varchar)")
    c.executemany("insert into intermediate.int_offer_daily values (?, ?, ?, ?, ?, ?, ?, ?)",
                  offer_rows("daily:a", "A", "a1", prices))
    assert real_market.score(c)["daily"]["reversals"]["reversals"] == reversals


def test_listing_median_moves(con):
    moves = real_market.score(con)["daily"]["listing_median_moves"]
    assert moves["card_days"] == 4 and moves["cards"] == 1
    assert moves["abs_move_pct_max"] > 5 and 0 < moves["share_over_5pct"] <= 1
