"""The signal marts of dbt_like_sql/marts/, unit-tested on small hand-made observations.

Each test fills an in-memory DuckDB's `observations` with a few rows, builds every model of the
project unchanged and in dependency order (staging, intermediate, marts), and checks a mart's
exact output.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal

from pipelines.warehouse.price_age import price_horizon_days
from tests.helpers.observations import (
    DAY,
    FRANKFURT,
    SHANGHAI,
    TODAY,
    ULANQAB,
    approx,
    build,
    obs,
    records,
    us,
)

SIGNAL_MARTS = ("slice_to_whole_ratio", "regional_discount", "month_end_dip", "spot_discount",
                "monthly_vs_hourly_saving", "multi_gpu_discount", "cheapest_offers")


# -- every mart --------------------------------------------------------------------------------

def test_every_mart_builds_on_empty_observations(con):
    build(con, [])
    for mart in SIGNAL_MARTS:     # market_claims: tests/sql/test_market_claims.py
        assert con.execute(f"select count(*) from marts.{mart}").fetchone()[0] == 0, mart


def test_marts_have_the_contract_columns(con):
    build(con, [])
    expected = {
        "slice_to_whole_ratio": "day source vendor vendor_kind region_code region_group gpu_model "
        "gpu_variant offer_kind billing_period offer_line slice_offer_id slice_sku gpu_fraction "
        "slice_vram_gb whole_offer_id slice_price_cny_per_hour whole_price_cny_per_hour "
        "slice_to_whole_ratio per_gpu_premium",
        "regional_discount": "day gpu_model offer_kind billing_period country region_group "
        "comparison reference reference_region_groups vendors vendors_paired offers "
        "distinct_offers "
        "median_price_cny_per_gpu_hour reference_price_cny_per_gpu_hour ratio_low ratio_high "
        "discount_pct error_bound_pp window_days",
        "month_end_dip": "month local_time_zone source vendor gpu_model gpu_variant region_code "
        "region_group offer_kind currency offers_listed offers_compared "
        "baseline_price_cny_per_gpu_hour month_end_price_cny_per_gpu_hour "
        "next_start_price_cny_per_gpu_hour dip_pct dip_se_pct month_ci_low_pct month_ci_high_pct "
        "drop_pct recovery_pct month_verdict months_observed months_dipped offers_followed "
        "offer_months positive_offer_months noise_pct between_month_pct strength_pct "
        "strength_se_pct depth_ci_low_pct depth_ci_high_pct p_value median_drop_pct "
        "median_recovery_pct dip_verdict months_needed",
        "spot_discount": "day source vendor vendor_kind region_code region_group gpu_model "
        "gpu_variant gpu_count gpu_fraction billing_period offer_line spot_offer_id spot_sku "
        "on_demand_offer_id on_demand_sku pairing on_demand_price_cny_per_gpu_hour "
        "spot_price_cny_per_gpu_hour spot_to_on_demand_ratio spot_discount_pct",
        "monthly_vs_hourly_saving": "day source vendor vendor_kind region_code region_group "
        "gpu_model gpu_variant gpu_fraction gpu_count offer_kind offer_line monthly_offer_id "
        "monthly_sku hourly_offer_id hourly_sku pairing hourly_price_cny_per_gpu_hour "
        "monthly_price_cny_per_gpu_hour saving_pct",
        "multi_gpu_discount": "day source vendor vendor_kind region_code region_group gpu_model "
        "gpu_variant offer_kind billing_period offer_line server_offer_id server_sku "
        "server_gpu_count single_offer_id server_price_cny_per_gpu_hour "
        "single_price_cny_per_gpu_hour server_to_single_ratio discount_pct",
        "cheapest_offers": "gpu_model offer_kind billing_period country region_group rank vendor "
        "source sku region_code gpu_fraction gpu_count price_per_gpu_hour_cny price_amount "
        "currency last_seen_at url price_basis prices_as_of price_basis_label price_as_of "
        "price_age_days",
    }
    for mart, columns in expected.items():
        cursor = con.execute(f"select * from marts.{mart} limit 0")
        assert [d[0] for d in cursor.description] == columns.split(), mart


# -- slice_to_whole_ratio ----------------------------------------------------------------------

def test_slice_ratio_against_the_whole_card(con):
    build(con, [obs(62), obs("24.50", gpu_fraction=0.25, sku="MIG 2g.20gb")])
    [row] = records(con, "select * from marts.slice_to_whole_ratio")
    assert row["day"] == date(2026, 11, 30)
    assert row["slice_sku"] == "MIG 2g.20gb"
    assert row["gpu_fraction"] == Decimal("0.25")
    assert row["slice_vram_gb"] == Decimal("20")
    assert row["region_group"] == "Beijing"
    assert row["slice_price_cny_per_hour"] == Decimal("24.50")
    assert row["whole_price_cny_per_hour"] == Decimal("62")
    assert row["slice_to_whole_ratio"] == approx(24.5 / 62)            # 0.395161...
    assert row["per_gpu_premium"] == approx(24.5 / 62 / 0.25)          # 1.580645...
    assert round(row["slice_to_whole_ratio"], 6) == 0.395161
    assert round(row["per_gpu_premium"], 5) == 1.58065


def test_slice_ratio_uses_the_lowest_whole_single_card(con):
    build(con, [obs(62), obs(70, sku="A100 80G premium"),
                obs(400, gpu_count=8),                     # a server is not a whole single card
                obs("24.50", gpu_fraction=0.25, sku="MIG 2g.20gb"),
                obs("36", gpu_fraction=0.5, sku="MIG 3g.40gb")])
    rows = records(con, "select slice_sku, whole_price_cny_per_hour, slice_to_whole_ratio "
                        "from marts.slice_to_whole_ratio order by slice_sku")
    assert [(r["slice_sku"], r["whole_price_cny_per_hour"]) for r in rows] == [
        ("MIG 2g.20gb", Decimal("62")), ("MIG 3g.40gb", Decimal("62"))]
    assert rows[1]["slice_to_whole_ratio"] == approx(36 / 62)


def test_slice_without_a_whole_card_there_has_no_row(con):
    build(con, [obs("24.50", gpu_fraction=0.25, sku="MIG 2g.20gb"),
                obs(62, **SHANGHAI),                                # another region
                obs(62, vendor="Other IDC", source="idc_other"),    # another vendor
                obs(62, offer_kind="spot"),                         # another kind
                obs(62 * 730, billing_period="month"),              # another billing period
                obs(62, observed_at=DAY - timedelta(days=1))])      # another day
    assert con.execute("select count(*) from marts.slice_to_whole_ratio").fetchone()[0] == 0


# -- regional_discount -------------------------------------------------------------------------

def test_regional_discount_against_tier1_cities(con):
    build(con, [obs(60, vendor="BJ one", source="bj_one"),
                obs(64, vendor="BJ two", source="bj_two"),
                obs(62, vendor="NM IDC", source="nm_idc"),
                obs("46.5", vendor="NM IDC", source="nm_idc", **ULANQAB),
                obs(10, gpu_fraction=0.25, vendor="NM IDC", source="nm_idc", **ULANQAB)])
    rows = {r["region_group"]: r for r in records(con, "select * from marts.regional_discount")}
    # Beijing is the whole reference: never its own, so no row, its reason in marts.held_pairs
    assert set(rows) == {"Inner Mongolia"}
    mongolia = rows["Inner Mongolia"]
    held = records(con, "select distinct held_reason from marts.held_pairs "
                        "where comparison = 'regional' and region_group = 'Beijing'")
    assert held == [{"held_reason": "the region is the reference itself: "
                                    "no other region of the reference"}]
    assert mongolia["reference"] == "CN tier-1 cities"
    assert mongolia["reference_region_groups"] == ["Beijing"]
    # the slice is not a whole card; the pair is NM IDC's Ulanqab card against its Beijing card
    assert (mongolia["vendors"], mongolia["vendors_paired"], mongolia["offers"]) == (1, 1, 2)
    assert mongolia["median_price_cny_per_gpu_hour"] == Decimal("46.5")
    assert mongolia["reference_price_cny_per_gpu_hour"] == Decimal("62")
    assert mongolia["discount_pct"] == approx(25.0)
    assert mongolia["ratio_low"] == mongolia["ratio_high"] == approx(0.75)
    assert mongolia["comparison"] == "same vendor"
    assert mongolia["country"] == "CN" and mongolia["day"] == date(2026, 11, 30)


def test_a_replicated_price_does_not_outweigh_other_vendors(con):
    def germany(i: int) -> dict:
        return {"region_code": f"de-{i}", "country": "DE", "province_or_state": f"State {i}",
                "city": None, "is_tier1_city": False}

    replicated = [obs(12, vendor="Copycat", source="copycat", **germany(i)) for i in range(10)]
    build(con, [*replicated,
                obs(20, vendor="Copycat", source="copycat", **us("Virginia", "us-east-1")),
                obs(30, vendor="Cloud B", source="cloud_b", **us("Virginia", "us-east-1")),
                obs(24, vendor="Cloud B", source="cloud_b", **FRANKFURT),
                obs(40, vendor="Cloud C", source="cloud_c", **us("Oregon", "us-west-2")),
                obs(32, vendor="Cloud C", source="cloud_c", **germany(1)),
                obs(34, vendor="Cloud C", source="cloud_c", **germany(2))])
    rows = {r["region_group"]: r for r in records(con, "select * from marts.regional_discount")}
    # the US is the whole reference: never its own, so no row (marts.held_pairs says why)
    assert set(rows) == {"DE"}
    row = rows["DE"]
    assert (row["offers"], row["vendors"], row["vendors_paired"]) == (16, 3, 3)
    assert row["distinct_offers"] == 7              # Copycat's ten copies of 12 CNY count once
    # per vendor first: Copycat 0.6, Cloud B 0.8, Cloud C 0.825 -> 0.8 (per offer: 0.6)
    assert row["discount_pct"] == approx(20.0)
    assert (row["ratio_low"], row["ratio_high"]) == (approx(0.6), approx(0.825))
    assert row["reference"] == "US" and row["reference_region_groups"] == ["US"]


def test_replicated_offers_inside_one_region_count_once(con):
    build(con, [obs(60, vendor="BJ one", source="bj_one"),
                obs(45, vendor="BJ one", source="bj_one", **ULANQAB),
                obs(64, vendor="BJ two", source="bj_two"),
                obs(56, vendor="BJ two", source="bj_two", **ULANQAB),
                obs(25, vendor="Copycat", source="copycat"),
                *[obs(20, vendor="Copycat", source="copycat", sku=f"box {i}", **ULANQAB)
                  for i in range(5)]])
    [row] = records(con, "select * from marts.regional_discount "
                         "where region_group = 'Inner Mongolia'")
    assert (row["offers"], row["vendors"], row["vendors_paired"]) == (10, 3, 3)
    assert row["distinct_offers"] == 6                # Copycat: 20 and 25, once each
    # vendor ratios 0.75, 0.8 (five copies, one vote), 0.875 -> 0.8
    assert row["discount_pct"] == approx(20.0)
    assert (row["ratio_low"], row["ratio_high"]) == (approx(0.75), approx(0.875))
    assert row["median_price_cny_per_gpu_hour"] == Decimal("45")
    assert row["reference_price_cny_per_gpu_hour"] == Decimal("60")


def test_regional_discount_without_a_reference_that_day(con):
    build(con, [obs("46.5", **ULANQAB), obs(62, observed_at=DAY - timedelta(days=1)),
                obs(62, offer_kind="spot")])
    [row] = records(con, "select * from marts.regional_discount where region_group = "
                         "'Inner Mongolia'")
    assert row["reference"] == "CN tier-1 cities"
    assert row["reference_price_cny_per_gpu_hour"] is None and row["discount_pct"] is None
    assert (row["vendors"], row["vendors_paired"], row["offers"]) == (1, 0, 0)
    assert row["median_price_cny_per_gpu_hour"] == Decimal("46.5")     # shown, not compared


# month_end_dip and month_end_capacity: tests/sql/test_month_end.py.


# -- spot_discount -----------------------------------------------------------------------------

def test_spot_discount_pairs_each_spot_offer(con):
    build(con, [obs(10), obs(12, sku="big box"), obs(3, offer_kind="spot"),
                obs(4, offer_kind="spot", sku="big box"),
                obs(2, offer_kind="spot", billing_period="month"),        # no monthly on-demand
                obs(1, gpu_fraction=0.5, offer_kind="spot", sku="half")])  # no on-demand half
    rows = records(con, "select * from marts.spot_discount order by spot_price_cny_per_gpu_hour")
    assert [(r["spot_sku"], r["on_demand_sku"], r["pairing"]) for r in rows] == [
        ("A100-80GB 1x1 spot hour", "A100-80GB 1x1 on_demand hour", "line"),   # the cheapest
        ("big box", "big box", "sku")]                      # its own instance type, not 10
    line, sku = rows
    assert line["gpu_fraction"] == Decimal("1")
    assert line["on_demand_price_cny_per_gpu_hour"] == Decimal("10")
    assert line["spot_price_cny_per_gpu_hour"] == Decimal("3")
    assert line["spot_to_on_demand_ratio"] == approx(0.3)
    assert line["spot_discount_pct"] == approx(70.0)
    assert sku["on_demand_price_cny_per_gpu_hour"] == Decimal("12")
    assert sku["spot_to_on_demand_ratio"] == approx(4 / 12)


def test_spot_dearer_than_on_demand_is_held_with_its_reason(con):
    """Spot above the same instance's on-demand price is outside the plausible range
    (intermediate.int_pair_rules): held in marts.held_pairs, not published."""
    build(con, [obs(10, source="gcp", vendor="GCP", **us("Iowa", "us-central1")),
                obs(11, source="gcp", vendor="GCP", offer_kind="spot",
                    **us("Iowa", "us-central1"))])
    assert records(con, "select * from marts.spot_discount") == []
    [held] = records(con, "select * from marts.held_pairs where comparison = 'spot'")
    assert (held["comparison"], held["ratio"]) == ("spot", approx(1.1))
    assert held["held_reason"] == ("ratio 1.1 outside the plausible range 0.05-1.0 "
                                   "(intermediate.int_pair_rules)")


# -- monthly_vs_hourly_saving ------------------------------------------------------------------

def test_monthly_package_saving(con):
    build(con, [obs("2.38", gpu_model="RTX4090-24GB", vram_gb=24),
                obs(1299, gpu_model="RTX4090-24GB", vram_gb=24, billing_period="month"),
                obs(1400, gpu_model="RTX4090-24GB", vram_gb=24, billing_period="month",
                    sku="other package"),
                obs(50, billing_period="day", gpu_model="RTX4090-24GB", vram_gb=24),
                obs(62)])                                        # hourly only: no row
    rows = records(con, "select * from marts.monthly_vs_hourly_saving "
                        "order by monthly_price_cny_per_gpu_hour")
    assert len(rows) == 2                               # one row per monthly offer
    row = rows[0]
    assert (row["gpu_model"], row["gpu_count"], row["offer_kind"]) == ("RTX4090-24GB", 1,
                                                                       "on_demand")
    assert {r["pairing"] for r in rows} == {"line"}      # no hourly offer has their SKUs
    assert rows[1]["saving_pct"] == approx(100 * (2.38 - 1400 / 730) / 2.38, rel=1e-5)
    assert row["hourly_price_cny_per_gpu_hour"] == Decimal("2.38")
    assert float(row["monthly_price_cny_per_gpu_hour"]) == approx(1299 / 730, rel=1e-6)
    assert row["saving_pct"] == approx(100 * (2.38 - 1299 / 730) / 2.38, rel=1e-5)
    assert round(row["saving_pct"], 1) == 25.2


def test_monthly_saving_compares_like_with_like(con):
    build(con, [obs(62), obs(8 * 60 * 730, gpu_count=8, billing_period="month"),
                obs(10 * 730, gpu_fraction=0.25, billing_period="month")])
    assert con.execute("select count(*) from marts.monthly_vs_hourly_saving").fetchone()[0] == 0


# -- multi_gpu_discount ------------------------------------------------------------------------

def test_multi_gpu_server_against_a_single_card(con):
    build(con, [obs(62), obs(66, sku="single premium"), obs(8 * 52.5, gpu_count=8),
                obs(8 * 60, gpu_count=8, sku="server premium"), obs(4 * 62, gpu_count=4),
                obs(8 * 40, gpu_count=8, **SHANGHAI)])           # no single card there
    rows = records(con, "select * from marts.multi_gpu_discount "
                        "order by server_gpu_count, server_price_cny_per_gpu_hour")
    assert [r["server_gpu_count"] for r in rows] == [4, 8, 8]     # one row per server offer
    four, eight, premium = rows
    assert premium["server_sku"] == "server premium"
    assert premium["server_to_single_ratio"] == approx(60 / 62)
    assert {r["single_offer_id"] for r in rows} == {obs(62)["offer_id"]}
    assert eight["server_price_cny_per_gpu_hour"] == Decimal("52.5")
    assert eight["single_price_cny_per_gpu_hour"] == Decimal("62")
    assert eight["server_to_single_ratio"] == approx(52.5 / 62)     # 0.8468
    assert round(eight["server_to_single_ratio"], 4) == 0.8468
    assert eight["discount_pct"] == approx(100 * (1 - 52.5 / 62))
    assert four["server_to_single_ratio"] == approx(1.0) and four["discount_pct"] == approx(0)


# -- cheapest_offers ---------------------------------------------------------------------------

def test_cheapest_offers_keeps_three_in_order(con):
    build(con, [obs(30, vendor="V30", source="s30"),
                obs(10, vendor="B ten", source="sb"),
                obs(20, vendor="V20", source="s20"),
                obs(10, vendor="A ten", source="sa"),
                obs(40, vendor="V40", source="s40"),
                # the latest price counts: 5 yesterday, 50 today
                obs(5, vendor="Was cheap", source="sw", observed_at=DAY - timedelta(days=1)),
                obs(50, vendor="Was cheap", source="sw"),
                obs(45, vendor="Shanghai", source="ss", **SHANGHAI)])
    rows = records(con, "select * from marts.cheapest_offers order by region_group, rank")
    beijing = [r for r in rows if r["region_group"] == "Beijing"]
    assert [(r["rank"], r["vendor"], r["price_per_gpu_hour_cny"]) for r in beijing] == [
        (1, "A ten", Decimal("10")), (2, "B ten", Decimal("10")), (3, "V20", Decimal("20"))]
    assert beijing[0]["source"] == "sa" and beijing[0]["country"] == "CN"
    assert beijing[0]["last_seen_at"] == DAY and beijing[0]["price_amount"] == Decimal("10")
    assert [(r["region_group"], r["rank"], r["vendor"]) for r in rows
            if r["region_group"] != "Beijing"] == [("Shanghai", 1, "Shanghai")]


def test_cheapest_offers_leave_out_prices_older_than_the_horizon(con):
    """The cheapest now: an offer last seen beyond the horizon is left out, and the next one
    ranks first; the horizon's edge day still counts, and each row says its as-of and age."""
    horizon = price_horizon_days()
    edge = datetime.combine(TODAY - timedelta(days=horizon), DAY.timetz())
    build(con, [obs(5, vendor="Stale", source="s5", observed_at=edge - timedelta(days=1)),
                obs(8, vendor="Edge", source="s8", observed_at=edge),
                obs(10, vendor="Fresh", source="s10")])
    rows = records(con, "select vendor, rank, price_as_of, price_age_days "
                        "from marts.cheapest_offers order by rank")
    assert rows == [
        {"vendor": "Edge", "rank": 1, "price_as_of": edge.date(), "price_age_days": horizon},
        {"vendor": "Fresh", "rank": 2, "price_as_of": DAY.date(),
         "price_age_days": (TODAY - DAY.date()).days}]


def test_cheapest_offers_leave_out_offers_their_record_no_longer_lists(con):
    """The cheapest now (issue 41, item 5): an offer last seen 20 days before the newest data of
    its record (its crawled source, or its archive for '<archive>:<vendor>' sources) was
    delisted, however recent; a record whose newest data is itself 20 days old keeps its offers,
    and a week behind is still listed."""
    earlier, week = DAY - timedelta(days=20), DAY - timedelta(days=7)
    build(con, [obs(10, vendor="Listed", source="crawl", sku="listed"),
                obs(5, vendor="Delisted", source="crawl", sku="gone", observed_at=earlier),
                obs(6, vendor="Missed a week", source="crawl", sku="week", observed_at=week),
                obs(9, vendor="Tracker A", source="tracker:a"),
                obs(4, vendor="Left the tracker", source="tracker:b", observed_at=earlier),
                obs(7, vendor="Old archive", source="edits:c", observed_at=earlier)])
    rows = records(con, "select vendor from marts.cheapest_offers order by rank")
    assert [r["vendor"] for r in rows] == ["Missed a week", "Old archive", "Tracker A"]


def test_cheapest_offers_rank_per_kind_and_billing_period(con):
    build(con, [obs(62), obs(20, offer_kind="spot"), obs(9000, billing_period="month"),
                obs(30, **us("Virginia", "us-east-1"), source="aws", vendor="AWS")])
    rows = records(con, "select offer_kind, billing_period, region_group, rank "
                        "from marts.cheapest_offers order by all")
    assert rows == [
        {"offer_kind": "on_demand", "billing_period": "hour", "region_group": "Beijing",
         "rank": 1},
        {"offer_kind": "on_demand", "billing_period": "hour", "region_group": "US", "rank": 1},
        {"offer_kind": "on_demand", "billing_period": "month", "region_group": "Beijing",
         "rank": 1},
        {"offer_kind": "spot", "billing_period": "hour", "region_group": "Beijing", "rank": 1}]
