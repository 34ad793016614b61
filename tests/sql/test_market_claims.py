"""marts.market_claims and the marts behind its three newer claims (off_peak_discount,
month_phase_stability, holiday_discount), on hand-made observations in an in-memory DuckDB.

Every project model is built unchanged, in dependency order (`build` of tests/helpers). The
verdicts, what they lack and need: test_market_claim_verdicts.py.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from pipelines.verdicts import DOES_NOT_HOLD, HOLDS, NOT_ENOUGH_EVIDENCE
from pipelines.warehouse.price_age import price_horizon_days
from spiders.layout import REPO_ROOT
from tests.helpers.observations import (
    BEIJING,
    GUIAN,
    NANJING,
    SHANGHAI,
    ULANQAB,
    approx,
    build,
    obs,
    records,
)

CLAIM_IDS = ["a100_80gb_beijing_hourly", "slice_20gb_hourly", "slice_40gb_hourly",
             "slice_share_of_whole", "quarter_a100_share_of_whole", "half_a100_hourly",
             "a100_80gb_monthly", "server_8gpu_monthly", "server_8gpu_share_of_single",
             "jiangsu_a100_80gb_hourly", "jiangsu_h800_hourly", "monthly_package_saving",
             "inner_mongolia_guizhou_discount", "spot_share_of_regular", "month_end_dips",
             "month_end_capacity_release", "month_start_mid_month_stable", "holiday_promotions",
             "off_peak_discounts"]
COLUMNS = ["claim_id", "claim", "measure", "scope", "measured_from", "measured_on", "offers",
           "distinct_offers", "vendors", "illustrative_offers", "median_value", "ci_low",
           "ci_high", "ci_method", "ci_coverage", "expected_low", "expected_high",
           "min_distinct_offers", "verdict", "evidence_lacking", "distinct_offers_needed",
           "reason", "source_doc"]


def claims(con) -> dict[str, dict]:
    rows = records(con, "select * from marts.market_claims")
    assert [r["claim_id"] for r in rows] == CLAIM_IDS        # every claim exactly once, in order
    return {r["claim_id"]: r for r in rows}


def evidence(con, claim_id: str) -> list[dict]:
    return records(con, f"select * from marts.market_claim_evidence where claim_id = '{claim_id}' "
                        "order by value_rank")


def daily_series(first: date, last: date, price_on, available_on=lambda d: True,
                 **overrides) -> list[dict]:
    """One observation a day from `first` to `last` (inclusive), priced by `price_on(day)`."""
    rows, day = [], first
    while day <= last:
        at = datetime(day.year, day.month, day.day, 9, tzinfo=UTC)
        rows.append(obs(price_on(day), observed_at=at, available=available_on(day), **overrides))
        day += timedelta(days=1)
    return rows


def is_month_end(day: date) -> bool:
    return (day + timedelta(days=5)).month != day.month


def vendors(prices, **overrides) -> list[dict]:
    """One offer per price, each at its own vendor (and source)."""
    return [obs(p, vendor=f"Vendor {i}", source=f"idc_{i}", **overrides)
            for i, p in enumerate(prices)]


# -- every claim, on empty data, cited in the repository ---------------------------------------

def test_every_claim_without_data_says_why_and_cites_the_repository(con):
    build(con, [])
    assert [d[0] for d in con.execute("select * from marts.market_claims").description] == COLUMNS
    doc = (REPO_ROOT / "docs" / "market-claims.md").read_text(encoding="utf-8")
    anchors = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
               for h in re.findall(r"^#{2,3} (.+)$", doc, re.M)}
    for row in claims(con).values():
        assert (row["verdict"], row["offers"], row["distinct_offers"]) == (NOT_ENOUGH_EVIDENCE,
                                                                          0, 0)
        assert (row["evidence_lacking"], row["distinct_offers_needed"]) == ("no offer in scope", 5)
        assert row["ci_low"] is None and row["reason"], row["claim_id"]
        assert row["reason"].endswith("; a verdict needs 5 distinct offers"), row["claim_id"]
        path, anchor = row["source_doc"].split("#")
        assert path == "docs/market-claims.md" and anchor in anchors, row["claim_id"]
    assert con.execute("select count(*) from marts.market_claim_evidence").fetchone()[0] == 0


# -- evidence: distinct offers, scopes ---------------------------------------------------------

def test_region_copies_of_one_offer_count_once(con):
    copies = [obs(60, vendor="Copier", source="copier", region_code=f"cn-beijing-{z}",
                  **{k: v for k, v in BEIJING.items() if k != "region_code"}) for z in "abcde"]
    result = claims(build(con, copies))
    row = result["a100_80gb_beijing_hourly"]
    assert (row["offers"], row["distinct_offers"], row["vendors"]) == (5, 1, 1)
    assert (row["verdict"], row["evidence_lacking"]) == (NOT_ENOUGH_EVIDENCE, "too few offers")
    [unit] = evidence(con, "a100_80gb_beijing_hourly")
    assert (unit["copies"], len(unit["offer_ids"])) == (5, 5)


def test_a_copy_at_another_price_is_another_offer(con):
    build(con, [obs(60, vendor="V", region_code="cn-beijing-a"),
                obs(60, vendor="V", region_code="cn-beijing-b"),
                obs(64, vendor="V", region_code="cn-beijing-c")])
    assert [u["value"] for u in evidence(con, "a100_80gb_beijing_hourly")] == [60.0, 64.0]


def test_regional_claim_pairs_each_vendor_with_itself_and_copies_count_once(con):
    rows = []
    for i in range(5):
        place = {"vendor": f"Vendor {i}", "source": f"idc_{i}"}
        rows += [obs(60, **place), obs(45, **place, **ULANQAB)]        # 25 % cheaper
    rows += [obs(48, vendor="Vendor 0", source="idc_0", **GUIAN)]      # 20 %: another value
    rows += [obs(45, vendor="Vendor 1", source="idc_1", **GUIAN)]      # a copy of 25 %
    rows += [obs(20, vendor="Cheap IDC", source="cheap", **GUIAN)]     # no tier-1 price: none
    row = claims(build(con, rows))["inner_mongolia_guizhou_discount"]
    assert (row["distinct_offers"], row["offers"], row["vendors"]) == (6, 7, 5)
    assert (row["median_value"], row["ci_low"], row["ci_high"]) == (25.0, 20.0, 25.0)
    assert row["verdict"] == "holds"


def test_a_half_slice_does_not_enter_the_quarter_claims(con):
    build(con, [obs(60), obs(20, gpu_fraction=0.25, sku="MIG 2g.20gb"),
                obs(30, gpu_fraction=0.5, sku="MIG 3g.40gb"),
                obs(6, gpu_fraction=0.05, sku="vGPU 4gb")])
    for claim_id in ("quarter_a100_share_of_whole", "slice_share_of_whole"):
        assert [u["value"] for u in evidence(con, claim_id)] == [approx(100 / 3)], claim_id
    assert [u["value"] for u in evidence(con, "half_a100_hourly")] == [30.0]


@pytest.mark.parametrize("singles, shares", [
    ([obs(60, gpu_variant="PCIe", sku="PCIe")], []),                 # SXM server, PCIe card: none
    ([obs(60, gpu_variant="PCIe", sku="PCIe"), obs(50, sku="SXM")], [90.0]),
])
def test_an_sxm_server_is_not_compared_with_a_pcie_card(con, singles, shares):
    build(con, [obs(8 * 45, gpu_count=8, gpu_variant="SXM", sku="8x SXM"), *singles])
    assert [u["value"] for u in evidence(con, "server_8gpu_share_of_single")] == shares


def test_spot_only_against_its_own_on_demand_offer(con):
    rows = []
    for i, share in enumerate([18, 20, 21, 22, 19]):
        place = {"vendor": f"Vendor {i}", "source": f"idc_{i}"}
        rows += [obs(50, **place), obs(50 * share / 100, offer_kind="spot", **place)]
    rows += [obs(1, offer_kind="spot", gpu_model="H100-80GB", vendor="Lonely", source="l")]
    row = claims(build(con, rows))["spot_share_of_regular"]
    assert (row["distinct_offers"], row["ci_low"], row["ci_high"]) == (5, 18.0, 22.0)
    assert row["verdict"] == "holds"


def test_each_offer_counts_at_its_latest_day(con):
    day_before = datetime(2026, 11, 29, 9, tzinfo=UTC)
    row = claims(build(con, [*vendors([20] * 5, observed_at=day_before), *vendors([60] * 5)]))[
        "a100_80gb_beijing_hourly"]
    assert (row["measured_from"], row["measured_on"], row["median_value"],
            row["distinct_offers"]) == (date(2026, 11, 30), date(2026, 11, 30), 60.0, 5)


@pytest.mark.parametrize("days_before, counted", [
    (30, True),                              # seen only on an older day: still the market
    (price_horizon_days(), True),            # on the horizon's edge
    (price_horizon_days() + 1, False),       # older than the horizon: history, not the market
])
def test_claims_read_the_market_within_the_price_horizon(con, days_before, counted):
    """The horizon counts back from the newest day of the history, not from today."""
    seen = datetime(2026, 11, 30, 9, tzinfo=UTC) - timedelta(days=days_before)
    older = obs(70, vendor="Vendor 9", source="idc_9", observed_at=seen)
    row = claims(build(con, [*vendors([60] * 4), older]))["a100_80gb_beijing_hourly"]
    assert (row["distinct_offers"], row["measured_from"], row["measured_on"]) == (
        (5, seen.date(), date(2026, 11, 30)) if counted else (4, date(2026, 11, 30),
                                                               date(2026, 11, 30)))


def test_jiangsu_and_other_regions_stay_apart(con):
    result = claims(build(con, [*vendors([25] * 5, **NANJING), *vendors([70] * 3, **SHANGHAI)]))
    assert result["jiangsu_a100_80gb_hourly"]["verdict"] == "holds"
    assert result["a100_80gb_beijing_hourly"]["distinct_offers"] == 0    # Shanghai is not Beijing


# -- off-peak (night) discount -----------------------------------------------------------------

def looks(hours_utc, price_on, **overrides) -> list[dict]:
    """One observation per UTC time in `hours_utc`, priced by `price_on(time)`."""
    return [obs(price_on(at), observed_at=at, **overrides) for at in hours_utc]


NOV30_BEIJING = [datetime(2026, 11, 29, 18, tzinfo=UTC),    # 02:00 Beijing, Nov 30: night
                 datetime(2026, 11, 29, 21, tzinfo=UTC),    # 05:00: night
                 datetime(2026, 11, 30, 1, tzinfo=UTC),     # 09:00: day
                 datetime(2026, 11, 30, 6, tzinfo=UTC)]     # 14:00: day


def test_off_peak_pairs_an_offers_local_night_with_its_own_day(con):
    night = lambda at: 8 if at.astimezone(timezone(timedelta(hours=8))).hour < 7 else 10  # noqa
    rows = looks(NOV30_BEIJING, night)
    rows += looks([datetime(2026, 11, 30, 3, tzinfo=UTC), datetime(2026, 11, 30, 15, tzinfo=UTC)],
                  lambda at: 3 if at.hour < 7 else 4, vendor="US cloud", source="us_cloud",
                  country="US", province_or_state="Virginia", city=None, region_code="us-east-1",
                  is_tier1_city=False, currency="USD")
    rows += looks([datetime(2026, 11, 30, 4, tzinfo=UTC)], lambda at: 9, vendor="Day only",
                  source="day_only")
    build(con, rows)
    result = {r["vendor"]: r for r in records(con, "select * from marts.off_peak_discount")}
    assert set(result) == {"Test IDC", "US cloud"}                      # day-only: no row
    beijing = result["Test IDC"]
    assert (beijing["local_date"], beijing["local_time_zone"]) == (date(2026, 11, 30),
                                                                    "Asia/Shanghai")
    assert (beijing["night_looks"], beijing["day_looks"]) == (2, 2)
    assert beijing["night_discount_pct"] == approx(20.0)
    us = result["US cloud"]
    assert (us["local_time_zone"], us["currency"], us["night_discount_pct"]) == ("UTC", "USD",
                                                                                approx(25.0))


def test_off_peak_claim(con):
    rows = []
    for i, discount in enumerate([0, 10, 20, 20, 30]):
        rows += looks(NOV30_BEIJING, lambda at, d=discount: 10 * (
            1 - d / 100 if at.astimezone(timezone(timedelta(hours=8))).hour < 7 else 1),
            vendor=f"Vendor {i}", source=f"idc_{i}")
    row = claims(build(con, rows))["off_peak_discounts"]
    assert (row["median_value"], row["ci_low"], row["ci_high"]) == (20.0, 0.0, 30.0)
    # 0 % is below 1 %: the interval overlaps, and its median of 20 % sits well inside
    assert (row["verdict"], row["evidence_lacking"]) == (NOT_ENOUGH_EVIDENCE,
                                                         "interval overlaps the range")
    assert row["distinct_offers_needed"] == 6          # 5 x (20/19)^2 = 5.54


def test_without_night_crawls_the_off_peak_and_holiday_claims_say_why(con):
    result = claims(build(con, vendors([60] * 5)))
    for claim_id, why in (("off_peak_discounts", "night"), ("holiday_promotions", "holiday")):
        row = result[claim_id]
        assert (row["verdict"], row["evidence_lacking"], row["distinct_offers_needed"]) == (
            NOT_ENOUGH_EVIDENCE, "no offer in scope", 5), claim_id
        assert why in row["reason"], claim_id


# -- month start and mid-month stability -------------------------------------------------------

def test_stability_per_phase_by_hand(con):
    # Oct 2026, days 1-31 (09:00 UTC = 17:00 Beijing, the same local day): 100 until the 14th,
    # 90 from the 15th (one -10 % step in mid-month), 80 in the last 5 days (27-31).
    price = lambda d: 80 if d.day >= 27 else 90 if d.day >= 15 else 100     # noqa: E731
    build(con, daily_series(date(2026, 10, 1), date(2026, 10, 31), price))
    [row] = records(con, "select * from marts.month_phase_stability")
    assert (row["local_month"], row["start_changes"], row["mid_changes"],
            row["month_end_changes"], row["start_mid_changes"]) == (date(2026, 10, 1), 6, 15,
                                                                   5, 21)
    assert row["start_mean_abs_change_pct"] == approx(0.0)
    assert row["mid_mean_abs_change_pct"] == approx(10 / 15)
    assert row["start_mid_mean_abs_change_pct"] == approx(10 / 21)
    assert row["start_mid_max_abs_change_pct"] == approx(10.0)
    assert row["start_mid_days_changed"] == 1
    assert row["month_end_mean_abs_change_pct"] == approx(100 * 10 / 90 / 5)


@pytest.mark.parametrize("price_on, verdict", [
    (lambda d: 50, HOLDS),                                            # flat: 0 % a day
    (lambda d: 50 if d.day % 2 else 51, DOES_NOT_HOLD),               # ~2 % every day
])
def test_stability_claim(con, price_on, verdict):
    rows = [r for i in range(5) for r in daily_series(
        date(2026, 10, 1), date(2026, 10, 31), price_on, vendor=f"Vendor {i}", source=f"idc_{i}")]
    row = claims(build(con, rows))["month_start_mid_month_stable"]
    assert (row["verdict"], row["distinct_offers"], row["measured_on"]) == (
        verdict, 5, date(2026, 10, 1))


# -- holidays ----------------------------------------------------------------------------------

def test_holiday_discount_against_its_own_baseline(con):
    # National Day 2026: statutory days Oct 1-3; baseline Sep 10-23 (21-8 days before).
    rows = daily_series(date(2026, 9, 8), date(2026, 10, 5),
                        lambda d: 90 if date(2026, 10, 1) <= d <= date(2026, 10, 3) else 100)
    rows += daily_series(date(2026, 9, 8), date(2026, 10, 5), lambda d: 5, vendor="US cloud",
                         source="us_cloud", country="US", province_or_state="Virginia",
                         city=None, region_code="us-east-1", is_tier1_city=False)
    build(con, rows)
    result = {r["holiday"]: r for r in records(con, "select * from marts.holiday_discount")}
    assert set(result) == {"National Day 国庆节", "Mid-Autumn 中秋"}   # Chinese vendor only
    national = result["National Day 国庆节"]
    assert (national["baseline_days"], national["holiday_days_seen"]) == (14, 3)
    assert national["holiday_discount_pct"] == approx(10.0)
    assert result["Mid-Autumn 中秋"]["holiday_discount_pct"] == approx(0.0)


def test_holiday_discount_leaves_out_an_offer_listed_in_two_currencies(con):
    # The same offer listed in CNY for its baseline and in USD on the holiday: its amounts
    # cannot be compared, so it has no row; the one-currency offer beside it has.
    one = daily_series(date(2026, 9, 8), date(2026, 10, 5), lambda d: 100, sku="one")
    two = daily_series(date(2026, 9, 8), date(2026, 9, 30), lambda d: 100, sku="two")
    two += daily_series(date(2026, 10, 1), date(2026, 10, 5), lambda d: 14, sku="two",
                        currency="USD")
    build(con, one + two)
    national = records(con, "select h.offer_id, o.sku from marts.holiday_discount as h "
                            "join (select distinct offer_id, sku from observations) as o "
                            "using (offer_id) where h.holiday = 'National Day 国庆节'")
    assert [r["sku"] for r in national] == ["one"]

def test_holiday_claim_reads_the_latest_holiday(con):
    rows = [r for i in range(5) for r in daily_series(
        date(2026, 9, 8), date(2026, 10, 3),
        lambda d: 85 if d >= date(2026, 10, 1) else 100, vendor=f"Vendor {i}", source=f"idc_{i}")]
    row = claims(build(con, rows))["holiday_promotions"]
    assert (row["measured_on"], row["median_value"], row["verdict"]) == (
        date(2026, 10, 1), 15.0, "holds")


# -- month end ---------------------------------------------------------------------------------

@pytest.mark.parametrize("month_end_price, verdict", [(45, HOLDS), (50, DOES_NOT_HOLD)])
def test_month_end_dip_claim_over_groups(con, month_end_price, verdict):
    rows = [r for i in range(5) for r in daily_series(
        date(2026, 10, 1), date(2026, 11, 7), lambda d: month_end_price if is_month_end(d) else 50,
        vendor=f"Vendor {i}", source=f"idc_{i}")]
    row = claims(build(con, rows))["month_end_dips"]
    assert (row["measured_on"], row["distinct_offers"], row["verdict"]) == (
        date(2026, 10, 1), 5, verdict)
