"""Month-end signals on hand-made series: int_offer_local_daily (the vendor's calendar),
month_end_dip (the same offers against their baseline and the next month's start, a sign test)
and month_end_capacity (offers released at month end, a signal of its own).

Only the models these marts read are built (in dependency order), in an in-memory DuckDB.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest

from pipelines.warehouse.sql_models import load_models, rebuild_from
from spiders.layout import SQL_DIR
from tests.helpers.observations import EXTERNAL, build_only, insert, obs, records


def days(first: date, last: date):
    day = first
    while day <= last:
        yield day
        day += timedelta(days=1)


def series(first: date, last: date, price_on, *, hour: int = 9, listed_on=lambda d: True,
           **overrides) -> list[dict]:
    """One observation a day at `hour` UTC on the days `listed_on` keeps, priced `price_on(day)`."""
    return [obs(price_on(d), observed_at=datetime(d.year, d.month, d.day, hour, tzinfo=UTC),
                **overrides)
            for d in days(first, last) if listed_on(d)]


def month_end(d: date) -> bool:
    """One of the last 5 days of its month."""
    return (d + timedelta(days=5)).month != d.month


def dip_rows(con) -> list[dict]:
    return records(con, "select * from marts.month_end_dip order by month")


def build_dip(con, rows: list[dict]) -> list[dict]:
    insert(con, rows)
    build_only(con, "marts.month_end_dip", "marts.month_end_capacity")
    return dip_rows(con)


OCT, JAN_7 = date(2026, 10, 1), date(2027, 1, 7)


def test_a_recovering_3_pct_dip_over_three_months_is_a_signal(con):
    rows = [*series(OCT, JAN_7, lambda d: 48.5 if month_end(d) else 50, sku="a"),
            *series(OCT, JAN_7, lambda d: 58.2 if month_end(d) else 60, sku="b")]
    october, november, december, january = build_dip(con, rows)
    for row in (october, november, december):
        assert row["offers_compared"] == 2 and row["dipped"] is True
        assert (row["dip_pct"], row["drop_pct"], row["recovery_pct"]) == (3.0, 3.0, 3.0)
        assert row["baseline_price_cny_per_gpu_hour"] == Decimal("55")    # median of 50, 60
        assert row["month_end_price_cny_per_gpu_hour"] == Decimal("53.35")
        assert row["next_start_price_cny_per_gpu_hour"] == Decimal("55")
    assert january["offers_compared"] == 0 and january["dipped"] is None   # no February start
    assert january["dip_pct"] is None
    assert (october["months_observed"], october["months_dipped"], october["offers_followed"]) \
        == (3, 3, 2)
    assert (october["offer_months"], october["positive_offer_months"]) == (6, 6)
    assert october["p_value"] == pytest.approx(1 / 64)               # all 6 positive: 1/2^6
    assert october["strength_pct"] == pytest.approx(3.0)
    assert october["dip_signal"] is True and january["dip_signal"] is True
    assert (october["month"], october["local_time_zone"], october["currency"]) == (
        OCT, "Asia/Shanghai", "CNY")


def test_a_steady_decline_is_not_a_dip(con):
    # 1.5 % cheaper every 5 days, compounding: the old mart's baseline-vs-month-end drop is ~4 %.
    def price(d: date) -> float:
        return round(100 * 0.985 ** ((d - OCT).days / 5), 4)
    rows = [r for sku in "abc" for r in series(OCT, JAN_7, price, sku=sku)]
    rows = build_dip(con, rows)
    complete = [r for r in rows if r["offers_compared"]]
    assert len(complete) == 3
    for row in complete:
        assert row["drop_pct"] > 3.5                       # cheaper at month end than mid-month
        assert row["recovery_pct"] < 0                     # ... and cheaper still next month
        assert abs(row["dip_pct"]) < 0.1                   # on the line from baseline to start
        assert row["dipped"] is False
    assert rows[0]["strength_pct"] < 1
    assert {r["dip_signal"] for r in rows} == {False}


def test_listings_that_vanish_at_month_end_are_capacity_not_a_dip(con):
    # Three cheap offers stay; three dearer ones leave for the last 5 days of every month and come
    # back on the 1st. No price moves, but the day's median over what is listed falls by a third.
    rows = [r for sku in "abc" for r in series(OCT, JAN_7, lambda d: 40, sku=sku)]
    rows += [r for sku in "xyz"
             for r in series(OCT, JAN_7, lambda d: 60, sku=sku,
                             listed_on=lambda d: not month_end(d))]
    rows = build_dip(con, rows)
    for row in rows[:3]:
        assert (row["offers_listed"], row["offers_compared"]) == (6, 3)   # the leavers: no end
        assert row["dip_pct"] == 0 and row["dipped"] is False
        assert row["baseline_price_cny_per_gpu_hour"] == row["month_end_price_cny_per_gpu_hour"]
    assert rows[0]["offer_months"] == 0 and rows[0]["p_value"] is None   # 9 exact ties
    assert {r["dip_signal"] for r in rows} == {False}
    capacity = records(con, "select * from marts.month_end_capacity order by month")
    for row in capacity[:3]:
        assert (row["baseline_listed_offers"], row["month_end_listed_offers"],
                row["next_start_listed_offers"]) == (6, 3, 6)
        assert row["listed_release_pct"] == pytest.approx(-50)
        assert row["available_release_pct"] == pytest.approx(-50)
        assert row["released"] is False
    assert capacity[0]["released_months"] == 0 and capacity[0]["release_signal"] is False


def test_a_usd_offer_moving_with_the_exchange_rate_is_not_a_dip(con):
    # Listed at 2 USD throughout; the CNY price falls 3 % at every month end with the rate.
    def usd(d: date, sku: str) -> dict:
        rate = Decimal("6.79") if month_end(d) else Decimal("7")
        return obs(2, sku=sku, currency="USD", price_per_gpu_hour_usd=Decimal(2),
                   price_per_gpu_hour_cny=2 * rate, vendor="Cloud", source="cloud_test",
                   country="US", region_code="us-east-1", province_or_state="Virginia",
                   city=None, is_tier1_city=False,
                   observed_at=datetime(d.year, d.month, d.day, 9, tzinfo=UTC))
    rows = build_dip(con, [usd(d, sku) for sku in "abc" for d in days(OCT, JAN_7)])
    for row in rows[:3]:
        assert row["local_time_zone"] == "UTC" and row["currency"] == "USD"
        assert row["month_end_price_cny_per_gpu_hour"] == Decimal("13.58")   # CNY did move
        assert row["dip_pct"] == 0 and row["dipped"] is False               # the price did not
    assert rows[0]["offer_months"] == 0
    assert {r["dip_signal"] for r in rows} == {False}


def test_a_beijing_dip_from_local_midnight_falls_in_the_local_month(con):
    # One look a day at 16:00 UTC = 00:00 Beijing of the next day: local Nov 1 is seen on
    # Oct 31 UTC, local Dec 1 and 2 on Nov 30 and Dec 1 UTC. The dip is local Nov 26-30.
    def local(d: date) -> datetime:
        return datetime(d.year, d.month, d.day, tzinfo=UTC) - timedelta(hours=8)
    rows = [obs(45 if date(2026, 11, 26) <= d <= date(2026, 11, 30) else 50,
                observed_at=local(d)) for d in days(date(2026, 11, 1), date(2026, 12, 2))]
    november, december = build_dip(con, rows)
    [first_dip] = records(con, """select d.local_date, d.local_month, d.close_price_amount
        from intermediate.int_offer_local_daily as d
        join staging.stg_observations as o
          on o.offer_id = d.offer_id and o.local_date = d.local_date
        where o.observed_at = timestamptz '2026-11-25 16:00:00+00'""")
    assert first_dip == {"local_date": date(2026, 11, 26), "local_month": date(2026, 11, 1),
                         "close_price_amount": Decimal("45")}
    assert november["month"] == date(2026, 11, 1)            # no October row from Oct 31 UTC
    assert november["local_time_zone"] == "Asia/Shanghai"
    # UTC days would give December's start one day (Dec 1 UTC = local Dec 2): incomplete
    assert november["offers_compared"] == 1
    assert november["month_end_price_cny_per_gpu_hour"] == Decimal("45")
    assert november["next_start_price_cny_per_gpu_hour"] == Decimal("50")
    assert november["dip_pct"] == pytest.approx(10.0)
    assert december["month"] == date(2026, 12, 1) and december["offers_compared"] == 0


def test_sign_test_p_value_and_median_interval_by_hand(con):
    # One complete month, 8 offers: 6 dip 3 %, 1 rises 2 % at month end, 1 is flat (a tie).
    first, last = date(2026, 11, 1), date(2026, 12, 7)
    rows = [r for sku in "abcdef"
            for r in series(first, last, lambda d: 48.5 if month_end(d) else 50, sku=sku)]
    rows += series(first, last, lambda d: 51 if month_end(d) else 50, sku="rise")
    rows += series(first, last, lambda d: 50, sku="flat")
    november, _ = build_dip(con, rows)
    # n = 7 untied offer-months, k = 6 positive: P(X >= 6) = (C(7,6) + C(7,7)) / 2^7 = 8/128
    assert (november["offer_months"], november["positive_offer_months"]) == (7, 6)
    assert november["p_value"] == pytest.approx(0.0625)
    # interval over all 8 (the tie included): ranks 2 and 7, since P(X <= 1) = 9/256 <= 0.05
    # < P(X <= 2) = 37/256; coverage 1 - 2 * 9/256. Sorted depths: -2, 0, 3 x 6.
    assert (november["depth_ci_low_pct"], november["depth_ci_high_pct"]) == (0.0, 3.0)
    assert november["ci_coverage"] == pytest.approx(1 - 18 / 256)
    assert november["strength_pct"] == 3.0
    assert november["dip_signal"] is False                   # one month, p = 0.0625


def test_above_400_offer_months_the_p_value_is_the_normal_approximation(con):
    first, last = date(2026, 11, 1), date(2026, 12, 7)
    insert(con, series(first, last, lambda d: 48.5 if month_end(d) else 50, sku="dip")
           + series(first, last, lambda d: 51 if month_end(d) else 50, sku="rise"))
    # 219 more copies of the dipping offer and 180 of the rising one: n = 401, k = 220
    for sku, copies in (("dip", 219), ("rise", 180)):
        con.execute("""insert into observations
            select o.* replace (o.offer_id || '-' || i as offer_id)
            from observations as o, (select unnest(range(1, ? + 1)) as i) where o.sku = ?""",
                    [copies, sku])
    build_only(con, "marts.month_end_dip")
    [november] = records(con, "select * from marts.month_end_dip where offers_compared > 0")
    n, k = 401, 220
    exact = sum(math.comb(n, j) for j in range(k, n + 1)) / 2 ** n
    assert (november["offer_months"], november["positive_offer_months"]) == (n, k)
    assert november["p_value"] == pytest.approx(exact, rel=0.01)
    assert november["ci_coverage"] == pytest.approx(0.90)


def test_groups_are_hourly_only_and_split_by_card_and_variant(con):
    # a monthly package is left out; a listing without a variant is its own group (NULL = NULL)
    first, last = date(2026, 11, 1), date(2026, 12, 7)
    rows = [*series(first, last, lambda d: 50 * 730, billing_period="month"),
            *series(first, last, lambda d: 50),
            *series(first, last, lambda d: 45, gpu_variant=None, sku="no variant"),
            *series(first, last, lambda d: 44, gpu_variant=None, sku="no variant 2"),
            *series(first, last, lambda d: 20, gpu_model="RTX4090-24GB")]
    rows = build_dip(con, rows)
    got = [(r["gpu_model"], r["gpu_variant"], r["offers_compared"],
            r["baseline_price_cny_per_gpu_hour"]) for r in rows if r["offers_compared"]]
    assert sorted(got, key=repr) == sorted([("A100-80GB", "SXM", 1, Decimal("50")),
                                            ("A100-80GB", None, 2, Decimal("44.5")),
                                            ("RTX4090-24GB", "SXM", 1, Decimal("20"))], key=repr)


# -- month_end_capacity ------------------------------------------------------------------------

@pytest.mark.parametrize(("first", "complete_months", "signal"), [
    (date(2026, 6, 1), 6, True),        # 6 of 6 months released: p = 1/64
    (date(2026, 8, 1), 4, False),       # 4 of 4: p = 1/16, below the evidence minimum
])
def test_capacity_released_at_month_end(con, first, complete_months, signal):
    last = date(2026, 12, 7)
    rows = series(first, last, lambda d: 50, sku="steady")
    rows += series(first, last, lambda d: 50, sku="released", listed_on=month_end)
    insert(con, rows)
    build_only(con, "marts.month_end_capacity", "marts.month_end_dip")
    capacity = records(con, "select * from marts.month_end_capacity order by month")
    complete = [r for r in capacity if r["released"] is not None]
    assert len(complete) == complete_months
    for row in complete:
        assert (row["baseline_available_offers"], row["month_end_available_offers"],
                row["next_start_available_offers"]) == (1, 2, 1)
        assert row["available_release_pct"] == pytest.approx(100)
        assert row["released"] is True
    assert capacity[0]["p_value"] == pytest.approx(0.5 ** complete_months)
    assert capacity[0]["median_release_pct"] == pytest.approx(100)
    assert {r["release_signal"] for r in capacity} == {signal}
    # the released offer has no baseline: no offer-month to compare, no dip
    assert {r["dip_signal"] for r in dip_rows(con)} == {False}


def test_a_day_the_source_was_not_read_is_a_gap_not_zero_offers(con):
    gap = date(2026, 11, 28)
    rows = series(date(2026, 11, 1), date(2026, 12, 7), lambda d: 50,
                  listed_on=lambda d: d != gap)
    insert(con, rows)
    build_only(con, "marts.month_end_capacity")
    november = records(con, "select * from marts.month_end_capacity order by month")[0]
    assert november["month_end_listed_offers"] == 1          # mean over the 4 days read
    assert november["released"] is False and november["untied_months"] == 0


# -- incremental: local days ---------------------------------------------------------------------

def test_incremental_local_days_equal_a_full_rebuild(con):
    # Beijing looks at 01:00 local (17:00 UTC the day before) and 10:00 local (02:00 UTC).
    def look(at: datetime, price: int) -> dict:
        return obs(price, observed_at=at)
    start = datetime(2026, 11, 1, 2, tzinfo=UTC)
    insert(con, [look(start + timedelta(days=d, hours=h), 60 + d)
                 for d in range(3) for h in (0, 15)], crawl_id="c-1")
    build_only(con, "intermediate.int_offer_local_daily")
    daily = next(m for m in load_models(SQL_DIR, EXTERNAL)
                 if m.table == "intermediate.int_offer_local_daily")
    # A new look at 10:00 local on Nov 4 (02:00 UTC Nov 4): the runner rebuilds local days from
    # Nov 4, and local Nov 4 also holds the earlier look at 01:00 local (17:00 UTC Nov 3).
    insert(con, [look(datetime(2026, 11, 4, 2, tzinfo=UTC), 55)], crawl_id="c-2")
    assert rebuild_from(con, daily) == "2026-11-04"
    hows = build_only(con, "intermediate.int_offer_local_daily")
    assert hows["intermediate.int_offer_local_daily"] == "incremental from 2026-11-04"
    incremental = con.execute("select * from intermediate.int_offer_local_daily "
                              "order by offer_id, local_date").fetchall()
    build_only(con, "intermediate.int_offer_local_daily", full=True)
    full = con.execute("select * from intermediate.int_offer_local_daily "
                       "order by offer_id, local_date").fetchall()
    assert incremental == full
    [nov_4] = records(con, "select * from intermediate.int_offer_local_daily "
                           "where local_date = date '2026-11-04'")
    # UTC Nov 3 17:00 (read only because the rebuild starts a day early) and UTC Nov 4 02:00
    assert nov_4["observations"] == 2 and nov_4["close_price_amount"] == Decimal("55")
