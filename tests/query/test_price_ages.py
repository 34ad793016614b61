"""Every price says how old it is (issue 38, item 4): the as-of date and age of a price (the
macros of pipelines/warehouse/sql/price_age_macros.sql), the age in words, the --max-age value and
the line a page opens with when most of its prices are older than the horizon."""

from __future__ import annotations

from datetime import UTC, date, datetime

import duckdb
import pytest

from pipelines.display import age_text
from pipelines.query.ages import (
    PriceAges,
    aged_out_note,
    left_out_sql,
    max_age_days,
    old_prices_note,
    within_age_sql,
)
from pipelines.query.errors import UnknownValueError
from pipelines.warehouse.price_age import create_price_age_macros, price_horizon_days

ON_DAY = date(2026, 12, 6)


@pytest.fixture(scope="module")
def macros():
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'Asia/Shanghai'")     # a day is a UTC day, whatever the zone
        create_price_age_macros(con, temporary=True)
        yield con


@pytest.mark.parametrize(("prices_as_of", "last_seen_at", "as_of", "age"), [
    # published prices: the date they are published as of, not the day the crawl saw them
    (date(2024, 6, 12), datetime(2026, 12, 5, 9, tzinfo=UTC), date(2024, 6, 12), 907),
    # live (no as-of of its own): the UTC day it was last seen
    (None, datetime(2026, 12, 3, 9, tzinfo=UTC), date(2026, 12, 3), 3),
    # seen at 23:30 UTC (07:30 the next day in Beijing): still that UTC day
    (None, datetime(2026, 11, 30, 23, 30, tzinfo=UTC), date(2026, 11, 30), 6),
    # seen today: 0 days old
    (None, datetime(2026, 12, 6, 0, 0, tzinfo=UTC), date(2026, 12, 6), 0),
    # dated ahead of the reference day (a price effective from a later date): not negative
    (date(2027, 1, 1), datetime(2026, 12, 5, 9, tzinfo=UTC), date(2027, 1, 1), 0),
    (None, datetime(2026, 12, 9, 9, tzinfo=UTC), date(2026, 12, 9), 0),
    # no basis, no date at all: no as-of, no age (not 0: unknown is not new)
    (None, None, None, None),
])
def test_as_of_and_age(macros, prices_as_of, last_seen_at, as_of, age):
    row = macros.execute("select price_as_of($p, $s), price_age_days(price_as_of($p, $s), $d)",
                         {"p": prices_as_of, "s": last_seen_at, "d": ON_DAY}).fetchone()
    assert row == (as_of, age)


def test_ages_count_to_today_unless_a_day_is_stated(macros):
    today = datetime.now(UTC).date()
    assert macros.execute("select price_reference_day()").fetchone()[0] in (
        today, date.fromordinal(today.toordinal() + 1))         # a test run across midnight
    macros.execute("set variable price_reference_day = date '2026-12-06'")
    try:
        assert macros.execute("select price_reference_day()").fetchone()[0] == ON_DAY
    finally:
        macros.execute("reset variable price_reference_day")


def test_the_horizon_is_the_macro_s():
    with duckdb.connect() as con:
        create_price_age_macros(con)
        assert con.execute("select price_horizon_days()").fetchone()[0] == price_horizon_days()
    assert 30 <= price_horizon_days() <= 365


@pytest.mark.parametrize(("days", "text"), [
    (0, "0 d"), (3, "3 d"), (59, "59 d"), (60, "2 mo"), (152, "5 mo"), (364, "12 mo"),
    (365, "1.0 y"), (767, "2.1 y"), (None, "?"),
])
def test_age_in_words(days, text):
    assert age_text(days) == text


@pytest.mark.parametrize(("value", "days"), [
    (None, "horizon"), ("all", None), ("ALL ", None), ("0", 0), ("30", 30), (400, 400), (0, 0),
])
def test_max_age(value, days):
    assert max_age_days(value) == (price_horizon_days() if days == "horizon" else days)


@pytest.mark.parametrize("value", ["-1", "ninety", "1.5", "", -1, 1.5, True])
def test_a_max_age_that_is_not_days_is_refused(value):
    with pytest.raises(UnknownValueError) as raised:
        max_age_days(value)
    assert raised.value.field == "max_age" and "all" in raised.value.message


@pytest.mark.parametrize(("shown", "old", "newest", "age", "line"), [
    (10, 0, date(2026, 12, 5), 1, None),                          # current
    (10, 5, date(2026, 12, 5), 1, None),                          # half is not most
    (10, 6, date(2026, 12, 5), 1,
     "most of these prices are older than 90 days: the newest is 2026-12-05 (1 day)"),
    (4, 4, date(2026, 8, 20), 108,
     "all of these prices are older than 90 days: the newest is 2026-08-20 (108 days)"),
    # nothing shown (the horizon left every one out): the newest still says how old
    (0, 0, date(2026, 8, 20), 108,
     "all of these prices are older than 90 days: the newest is 2026-08-20 (108 days)"),
    (0, 0, None, None, None),                                     # nothing at all
])
def test_the_line_a_page_of_old_prices_opens_with(shown, old, newest, age, line):
    assert old_prices_note(PriceAges(shown, old, newest, age, 90)) == line


@pytest.mark.parametrize(("source", "origin"), [
    ("idc_sinnet_bj", "idc_sinnet_bj"),                       # a crawled source is its record
    ("gpu-rental-prices:runpod", "gpu-rental-prices"),        # an archive's vendor: the archive
    ("cloud-gpus:lambda", "cloud-gpus"),
])
def test_the_record_of_a_source(macros, source, origin):
    assert macros.execute("select price_origin(?)", [source]).fetchone()[0] == origin


@pytest.mark.parametrize(("last_seen", "newest", "behind"), [
    (datetime(2026, 8, 22, 9, tzinfo=UTC), datetime(2026, 8, 22, 23, tzinfo=UTC), 0),
    (datetime(2026, 7, 10, 9, tzinfo=UTC), datetime(2026, 8, 22, 9, tzinfo=UTC), 43),
    # UTC days, whatever the session's zone (23:30 UTC is the next day in Shanghai)
    (datetime(2026, 8, 21, 23, 30, tzinfo=UTC), datetime(2026, 8, 22, 0, 30, tzinfo=UTC), 1),
])
def test_days_behind_the_record_s_newest_data(macros, last_seen, newest, behind):
    assert macros.execute("select days_behind(?, ?)", [last_seen, newest]).fetchone()[0] == behind


@pytest.mark.parametrize(("age", "behind", "max_age", "now"), [
    (0, 0, 180, True),
    (180, 7, 180, True),                    # at the horizon, a week behind: still now
    (181, 0, 180, False),                   # older than the horizon
    (30, 8, 180, False),                    # recent, but its record no longer lists it
    (400, 0, 365, False),                   # a wider max age, still older
    (300, 0, 365, True),
    (300, 20, 365, False),                  # widening the age does not bring a delisted one back
    (None, 0, 180, False),                  # undated: never now
])
def test_the_rule_of_now(macros, age, behind, max_age, now):
    assert macros.execute("select price_is_now(?::int, ?::int, ?::int)",
                          [age, behind, max_age]).fetchone()[0] is now


@pytest.mark.parametrize(("older", "delisted", "note"), [
    (0, 0, None),
    (2, 0, "2 offers older than 180 days left out (--max-age all shows them)"),
    (0, 1, "1 offer no longer listed by their record (last seen over 7 days before its newest "
           "data) left out (--max-age all shows them)"),
    (2, 3, "5 offers left out: 2 older than 180 days, 3 no longer listed by their record (last "
           "seen over 7 days before its newest data) (--max-age all shows them)"),
])
def test_what_now_left_out_says_each_reason(older, delisted, note):
    assert aged_out_note(older, 180, delisted) == note


def test_a_max_age_of_all_leaves_nothing_out():
    assert within_age_sql(None) == "true" and left_out_sql(None) == ("false", "false")
