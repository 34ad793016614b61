"""Month-end signals on hand-made series: int_offer_local_daily (the vendor's calendar),
month_end_dip (the same offers against their baseline and the next month's start, judged against
each offer's own noise, months pooled by a random-effects mean) and month_end_capacity (offers
released at month end, a signal of its own), each with three verdicts.

Only the models these marts read are built (in dependency order), in an in-memory DuckDB.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest

from pipelines.verdicts import DOES_NOT_HOLD, HOLDS, NOT_ENOUGH_EVIDENCE, VERDICTS
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


# The mart's params: a price that never moved has noise 0.25 % (the floor), and a depth's
# standard error is 1.5 x the offer's noise; intervals are one-sided 5 % (z = 1.645).
FLOOR_SE = 1.5 * 0.25
Z = 1.645


def test_a_recovering_3_pct_dip_over_three_months_holds(con):
    rows = [*series(OCT, JAN_7, lambda d: 48.5 if month_end(d) else 50, sku="a"),
            *series(OCT, JAN_7, lambda d: 58.2 if month_end(d) else 60, sku="b")]
    october, november, december, january = build_dip(con, rows)
    for row in (october, november, december):
        assert row["offers_compared"] == 2 and row["month_verdict"] == HOLDS
        assert (row["dip_pct"], row["drop_pct"], row["recovery_pct"]) == (3.0, 3.0, 3.0)
        assert row["dip_se_pct"] == pytest.approx(FLOOR_SE)     # flat prices: the floor
        assert row["baseline_price_cny_per_gpu_hour"] == Decimal("55")    # median of 50, 60
        assert row["month_end_price_cny_per_gpu_hour"] == Decimal("53.35")
        assert row["next_start_price_cny_per_gpu_hour"] == Decimal("55")
    # no February start: January cannot be judged yet, which is not "no dip"
    assert january["offers_compared"] == 0 and january["month_verdict"] == NOT_ENOUGH_EVIDENCE
    assert january["dip_pct"] is None
    assert (october["months_observed"], october["months_dipped"], october["offers_followed"]) \
        == (3, 3, 2)
    assert (october["offer_months"], october["positive_offer_months"]) == (6, 6)
    # three equal months: no spread between them (tau = 0), the error shrinks by sqrt(3)
    assert october["between_month_pct"] == 0 and october["noise_pct"] == 0.25
    assert october["strength_pct"] == pytest.approx(3.0)
    assert october["strength_se_pct"] == pytest.approx(FLOOR_SE / math.sqrt(3))
    assert october["depth_ci_low_pct"] == pytest.approx(3.0 - Z * FLOOR_SE / math.sqrt(3))
    assert october["p_value"] < 1e-6
    assert october["dip_verdict"] == HOLDS and january["dip_verdict"] == HOLDS
    assert october["months_needed"] == 0
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
        assert row["month_verdict"] == DOES_NOT_HOLD       # the interval is below 1 %
    assert rows[0]["strength_pct"] < 1
    assert {r["dip_verdict"] for r in rows} == {DOES_NOT_HOLD}


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
        assert row["dip_pct"] == 0 and row["month_verdict"] == DOES_NOT_HOLD
        assert row["baseline_price_cny_per_gpu_hour"] == row["month_end_price_cny_per_gpu_hour"]
    assert (rows[0]["offer_months"], rows[0]["positive_offer_months"]) == (9, 0)
    assert {r["dip_verdict"] for r in rows} == {DOES_NOT_HOLD}
    capacity = records(con, "select * from marts.month_end_capacity order by month")
    for row in capacity[:3]:
        assert (row["baseline_listed_offers"], row["month_end_listed_offers"],
                row["next_start_listed_offers"]) == (6, 3, 6)
        assert row["listed_release_pct"] == pytest.approx(-50)
        assert row["available_release_pct"] == pytest.approx(-50)
        assert row["released"] is False
    assert capacity[0]["released_months"] == 0
    # 3 of 3 months short of a release: p = 1/8, not yet a "does not hold" (5 months needed)
    assert capacity[0]["release_verdict"] == NOT_ENOUGH_EVIDENCE
    assert capacity[0]["months_needed"] == 2


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
        assert row["dip_pct"] == 0 and row["month_verdict"] == DOES_NOT_HOLD   # the price did not
    assert rows[0]["positive_offer_months"] == 0
    assert {r["dip_verdict"] for r in rows} == {DOES_NOT_HOLD}


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


NOV_1, DEC_7 = date(2026, 11, 1), date(2026, 12, 7)


def noisy(dip_pct: float, wobble: float):
    """50 CNY, with baseline days 8-14 at 50 - `wobble` and 16-22 at 50 + `wobble` (day 15 at 50:
    the median stays 50), days 1-7 of December at 50, and November's last 5 days `dip_pct` %
    lower."""
    def price(d: date) -> float:
        if month_end(d):
            return 50 * (1 - dip_pct / 100)
        if d.month == 11 and 8 <= d.day <= 22 and d.day != 15:
            return 50 + (wobble if d.day > 15 else -wobble)
        return 50
    return price


@pytest.mark.parametrize(("dip_pct", "wobble", "verdict"), [
    (3.0, 0.5, HOLDS),                   # 3 - 1.645 x 1.197 = 1.03 > 0
    (1.5, 0.5, NOT_ENOUGH_EVIDENCE),     # 1.5 -/+ 1.97: a dip of 1 % is neither shown nor ruled out
    (0.0, 0.5, NOT_ENOUGH_EVIDENCE),     # no dip, but noise too large to rule one out
    (0.0, 0.0, DOES_NOT_HOLD),           # no dip and a still price: 0 + 1.645 x 0.375 < 1
    (1.5, 0.0, HOLDS),                   # a still price makes a small dip clear
])
def test_a_month_is_judged_against_the_offers_own_noise_by_hand(con, dip_pct, wobble, verdict):
    november, _ = build_dip(con, series(NOV_1, DEC_7, noisy(dip_pct, wobble)))
    # the line from b = 50 to n = 50 is flat; 14 of its 22 days lie wobble / 50 off it
    noise = max(100 * wobble / 50 * math.sqrt(14 / 22), 0.25)
    assert november["noise_pct"] == pytest.approx(noise, rel=1e-6)
    assert november["dip_pct"] == pytest.approx(dip_pct)
    assert november["dip_se_pct"] == pytest.approx(1.5 * noise, rel=1e-6)
    assert november["month_ci_low_pct"] == pytest.approx(dip_pct - Z * 1.5 * noise, rel=1e-6)
    assert november["month_verdict"] == verdict
    # one month is never a recurring pattern: that needs one more month, whatever this one says
    assert november["dip_verdict"] == NOT_ENOUGH_EVIDENCE and november["months_needed"] == 1


def test_one_deep_month_does_not_make_a_recurring_dip(con):
    # October flat, November 9 % down at its end, still prices: each month's error is the floor,
    # but the months disagree far beyond it, and the random-effects mean carries that spread.
    rows = build_dip(con, series(OCT, DEC_7, lambda d: 45.5 if month_end(d) and d.month == 11
                                 else 50))
    october, november = rows[0], rows[1]
    assert (october["month_verdict"], november["month_verdict"]) == (DOES_NOT_HOLD, HOLDS)
    weight = 1 / FLOOR_SE ** 2
    q_statistic = 2 * weight * 4.5 ** 2                      # both months 4.5 from their mean 9/2
    tau_squared = (q_statistic - 1) / (2 * weight - 2 * weight ** 2 / (2 * weight))
    se = math.sqrt((FLOOR_SE ** 2 + tau_squared) / 2)
    assert october["strength_pct"] == pytest.approx(4.5)
    assert october["between_month_pct"] == pytest.approx(math.sqrt(tau_squared))
    assert october["strength_se_pct"] == pytest.approx(se)
    assert october["depth_ci_low_pct"] < 0 and october["dip_verdict"] == NOT_ENOUGH_EVIDENCE
    # at that spread, (1.645 x month error / 4.5)^2 months would clear 0: 6, so 4 more
    months = math.ceil((Z * math.sqrt(FLOOR_SE ** 2 + tau_squared) / 4.5) ** 2)
    assert october["months_needed"] == months - 2 == 4


def test_the_p_value_is_the_normal_tail_of_the_pooled_depth(con):
    rows = build_dip(con, series(OCT, DEC_7, lambda d: 49.6 if month_end(d) else 50))
    october = rows[0]
    z = october["strength_pct"] / october["strength_se_pct"]
    assert october["p_value"] == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)), abs=1e-7)
    assert october["strength_pct"] == pytest.approx(0.8)    # below 1 %: not a dip that counts
    assert october["dip_verdict"] == NOT_ENOUGH_EVIDENCE and october["months_needed"] >= 1
    assert {r["dip_verdict"] for r in rows} | {r["month_verdict"] for r in rows} <= set(VERDICTS)


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

@pytest.mark.parametrize(("first", "complete_months", "verdict", "needed"), [
    (date(2026, 6, 1), 6, HOLDS, 0),                 # 6 of 6 months released: p = 1/64
    (date(2026, 8, 1), 4, NOT_ENOUGH_EVIDENCE, 1),   # 4 of 4: p = 1/16, one month short
])
def test_capacity_released_at_month_end(con, first, complete_months, verdict, needed):
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
    assert {r["release_verdict"] for r in capacity} == {verdict}
    assert {r["months_needed"] for r in capacity} == {needed}
    # the released offer has no baseline: no offer-month to compare; the steady one did not dip
    assert {r["dip_verdict"] for r in dip_rows(con)} == {DOES_NOT_HOLD}


def test_a_steady_count_for_six_months_is_no_release(con):
    # every month ties (no sign): no evidence for a release, and six months of it are evidence
    # against one, not "not enough evidence" forever
    insert(con, series(date(2026, 6, 1), date(2026, 12, 7), lambda d: 50))
    build_only(con, "marts.month_end_capacity")
    capacity = records(con, "select * from marts.month_end_capacity order by month")
    assert capacity[0]["untied_months"] == 0 and capacity[0]["months_observed"] == 6
    assert {r["release_verdict"] for r in capacity} == {DOES_NOT_HOLD}


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
