"""The simulator's time effects on small synthetic offers: month-end dips and listing churn in the
vendor's local calendar, steady trends, exchange-rate moves, and `append_hour` continuing each of
them exactly as a longer simulation; the Python calendar rule agrees with SQL staging."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from pipelines.simulate import (
    FxMove,
    MonthEndChurn,
    MonthEndDip,
    PriceDrop,
    SimulationError,
    Trend,
    append_hour,
    local_time_zone,
    month_end_window,
    simulate,
)
from tests.helpers.simulated import make_offer, query

JUNE_20 = datetime(2026, 6, 20, tzinfo=UTC)


def mixed_offers() -> pd.DataFrame:
    """Two Beijing-time vendors (one in China, one a `_cn` source listed abroad), a UTC vendor
    listing in USD and one listing in EUR."""
    return pd.DataFrame([
        make_offer("bj-1", "idc_test", amount="12.00"),
        make_offer("bj-2", "idc_test", amount="30000", period="month", gpu_count=8),
        make_offer("cn-abroad", "cloud_cn", country="SG", province=None, tier1=False,
                   amount="9.50"),
        make_offer("us-1", "cloud_us", country="US", currency="USD", amount="2.50",
                   province="California", tier1=False),
        make_offer("eu-1", "cloud_eu", country="DE", currency="EUR", amount="2.10",
                   province=None, tier1=False),
    ])


def hours_of(path: Path, offer_id: str) -> set[pd.Timestamp]:
    rows = query(path, "select observed_hour from observations where offer_id = ?", [offer_id])
    return set(rows["observed_hour"])


def stamp(*args) -> pd.Timestamp:
    return pd.Timestamp(datetime(*args, tzinfo=UTC))


# ----------------------------------------------------------------------------------------------
# The calendar
# ----------------------------------------------------------------------------------------------

def test_local_time_zone_rule():
    assert local_time_zone("idc_test", "CN") == "Asia/Shanghai"
    assert local_time_zone("cloud_cn", "SG") == "Asia/Shanghai"      # a Chinese vendor abroad
    assert local_time_zone("cloud_us", "US") == "UTC"
    assert local_time_zone("cloud_us", None) == "UTC"
    assert local_time_zone("cloud_CN", "US") == "UTC"                # SQL's like is case-sensitive
    # a zone the offer states (its spider's local_time_zone) wins, except over an offer in China
    assert local_time_zone("cloud_us", "JP", "Asia/Tokyo") == "Asia/Tokyo"
    assert local_time_zone("cloud_cn", "US", "UTC") == "UTC"
    assert local_time_zone("cloud_us", "CN", "Asia/Tokyo") == "Asia/Shanghai"
    assert local_time_zone("cloud_cn", "US", None) == "Asia/Shanghai"


def test_month_end_window_in_beijing_starts_at_16_utc_the_day_before():
    first = int(datetime(2026, 6, 25, 12, tzinfo=UTC).timestamp()) // 3600
    hours = np.arange(first, first + 6 * 24)
    beijing = month_end_window(hours, 5, "Asia/Shanghai")
    utc = month_end_window(hours, 5, "UTC")
    as_time = [datetime.fromtimestamp(h * 3600, UTC) for h in hours]
    assert as_time[int(np.argmax(beijing))] == datetime(2026, 6, 25, 16, tzinfo=UTC)
    assert as_time[int(np.argmax(utc))] == datetime(2026, 6, 26, tzinfo=UTC)
    assert as_time[len(hours) - int(np.argmax(beijing[::-1]))] == datetime(2026, 6, 30, 16,
                                                                          tzinfo=UTC)
    assert beijing.sum() == utc.sum() == 5 * 24
    assert not beijing[as_time.index(datetime(2026, 6, 30, 16, tzinfo=UTC))]
    assert utc[as_time.index(datetime(2026, 6, 30, 23, tzinfo=UTC))]


def test_python_and_sql_staging_agree_on_the_local_calendar(tmp_path):
    """stg_observations' local_time_zone and local_date, built on simulated rows, are what
    local_time_zone() and month_end_window() say."""
    from pipelines.warehouse.sql_models import load_models, run_model
    from spiders.layout import SQL_DIR

    offers = mixed_offers()
    offers.loc[len(offers)] = make_offer("upper", "cloud_CN", country="US", province=None,
                                         tier1=False)
    path = tmp_path / "calendar.db"
    simulate(path, offers=offers, start=datetime(2026, 6, 25, tzinfo=UTC), days=7, seed=1,
             build_models=False)
    con = duckdb.connect(str(path))
    try:
        # stg_observations and what it reads (the shown observations, the sources' bases), in
        # dependency order
        needed = ("intermediate.int_source_price_basis", "intermediate.int_hiding_crawls",
                  "staging.stg_shown_observations",
                  "staging.stg_observations")
        for model in load_models(SQL_DIR):
            if model.table in needed:
                run_model(con, model, full=True)
        rows = con.execute("""
            select source, country, local_time_zone, epoch(observed_hour)::bigint // 3600 as h,
                   day(local_date) > day(last_day(local_date)) - 5 as sql_month_end
            from staging.stg_observations order by all""").df()
    finally:
        con.close()
    assert len(rows) == len(offers) * 7 * 24
    python_zone = [local_time_zone(s, None if pd.isna(c) else c)
                   for s, c in zip(rows["source"], rows["country"], strict=True)]
    assert list(rows["local_time_zone"]) == python_zone
    assert set(python_zone) == {"Asia/Shanghai", "UTC"}
    for zone, group in rows.groupby("local_time_zone"):
        python_window = month_end_window(group["h"].to_numpy(), 5, zone)
        assert (python_window == group["sql_month_end"].to_numpy()).all(), zone


# ----------------------------------------------------------------------------------------------
# Month-end dip and churn, local calendar
# ----------------------------------------------------------------------------------------------

def test_dip_follows_the_local_calendar_and_recovers_on_day_1(tmp_path):
    path = tmp_path / "dip.db"
    simulate(path, offers=mixed_offers(), start=JUNE_20, days=15, seed=2, noise_pct=0,
             build_models=False, effects=[MonthEndDip(10, ("idc_test", "cloud_us"), days=5)])
    prices = query(path, """
        select offer_id, observed_hour, price_amount::double as amount from observations
        where offer_id in ('bj-1', 'us-1', 'cn-abroad')""")
    price = {(o, h): a for o, h, a in prices.itertuples(index=False)}
    # Beijing: 26 June 00:00 local = 25 June 16:00 UTC; back on 1 July 00:00 local = 30 June 16:00
    assert price["bj-1", stamp(2026, 6, 25, 15)] == 12.0
    assert price["bj-1", stamp(2026, 6, 25, 16)] == pytest.approx(10.8)
    assert price["bj-1", stamp(2026, 6, 30, 15)] == pytest.approx(10.8)
    assert price["bj-1", stamp(2026, 6, 30, 16)] == 12.0
    # UTC vendor: the UTC days
    assert price["us-1", stamp(2026, 6, 25, 23)] == 2.5
    assert price["us-1", stamp(2026, 6, 26, 0)] == pytest.approx(2.25)
    assert price["us-1", stamp(2026, 6, 30, 23)] == pytest.approx(2.25)
    assert price["us-1", stamp(2026, 7, 1, 0)] == 2.5
    assert {a for (o, _), a in price.items() if o == "cn-abroad"} == {9.5}   # not dipped


def test_vanish_leaves_no_rows_in_the_local_window_and_rows_again_on_day_1(tmp_path):
    path = tmp_path / "vanish.db"
    simulate(path, offers=mixed_offers(), start=JUNE_20, days=15, seed=3, build_models=False,
             effects=[MonthEndChurn("vanish", ("idc_test", "cloud_us"), days=5, share=1.0)])
    all_hours = {stamp(2026, 6, 20) + pd.Timedelta(hours=h) for h in range(15 * 24)}
    beijing_gap = {h for h in all_hours if stamp(2026, 6, 25, 16) <= h < stamp(2026, 6, 30, 16)}
    utc_gap = {h for h in all_hours if stamp(2026, 6, 26) <= h < stamp(2026, 7, 1)}
    assert hours_of(path, "bj-1") == all_hours - beijing_gap
    assert hours_of(path, "bj-2") == all_hours - beijing_gap
    assert hours_of(path, "us-1") == all_hours - utc_gap
    assert hours_of(path, "cn-abroad") == all_hours                   # not churned
    crawls = query(path, """
        select c.crawl_id, c.offers, c.normalized_rows, count(o.offer_id) as rows
        from raw.crawls c left join observations o using (crawl_id) group by all""")
    assert (crawls["rows"] == crawls["offers"]).all()
    assert (crawls["rows"] == crawls["normalized_rows"]).all()
    assert (crawls["offers"] == 0).any()                              # idc_test in its window


def test_vanish_picks_a_seeded_share(tmp_path):
    offers = pd.DataFrame([make_offer(f"o{i}", "idc_test") for i in range(40)])
    path = tmp_path / "share.db"
    simulate(path, offers=offers, start=JUNE_20, days=10, every_hours=6, seed=4,
             build_models=False, effects=[MonthEndChurn("vanish", share=0.5)])
    seen = query(path, """select count(distinct offer_id) as n from observations
                          where observed_hour = timestamptz '2026-06-27 00:00:00+00'""")["n"][0]
    assert 8 <= seen <= 32 and seen != 40


def test_appear_adds_in_stock_clones_at_the_same_price_only_in_the_window(tmp_path):
    path = tmp_path / "appear.db"
    simulate(path, offers=mixed_offers(), start=JUNE_20, days=15, seed=5, noise_pct=3,
             build_models=False, effects=[MonthEndChurn("appear", ("idc_test",), share=1.0)])
    all_hours = {stamp(2026, 6, 20) + pd.Timedelta(hours=h) for h in range(15 * 24)}
    window = {h for h in all_hours if stamp(2026, 6, 25, 16) <= h < stamp(2026, 6, 30, 16)}
    assert hours_of(path, "bj-1#month-end") == window
    assert hours_of(path, "bj-1") == all_hours
    pairs = query(path, """
        select c.sku, c.available, c.price_amount = o.price_amount as same_price,
               c.price_per_gpu_hour_cny = o.price_per_gpu_hour_cny as same_cny
        from observations c join observations o
          on o.offer_id = 'bj-1' and c.offer_id = 'bj-1#month-end'
         and o.observed_hour = c.observed_hour""")
    assert len(pairs) == len(window)
    assert (pairs["sku"] == "sku-bj-1#month-end").all()
    assert pairs["available"].all() and pairs["same_price"].all() and pairs["same_cny"].all()
    moved = query(path, "select count(distinct price_amount) as n from observations "
                        "where offer_id = 'bj-1'")["n"][0]
    assert moved > 1                          # the noise moves it, and the clone moves with it


# ----------------------------------------------------------------------------------------------
# Trend and exchange-rate move
# ----------------------------------------------------------------------------------------------

def test_trend_is_steady_and_compounds_to_the_expected_multiple(tmp_path):
    path = tmp_path / "trend.db"
    simulate(path, offers=mixed_offers(), start=JUNE_20, days=31, seed=6, noise_pct=0,
             build_models=False, effects=[Trend(-9, ("idc_test",))])
    series = query(path, """select observed_hour, price_amount::double as amount
                            from observations where offer_id = 'bj-1' order by 1""")
    at = dict(zip(series["observed_hour"], series["amount"], strict=True))
    assert at[stamp(2026, 6, 20)] == 12.0
    assert at[stamp(2026, 7, 20)] == pytest.approx(12 * 0.91, rel=5e-4)         # day 30
    assert at[stamp(2026, 7, 5)] == pytest.approx(12 * 0.91 ** 0.5, rel=5e-4)   # day 15
    five_days = at[stamp(2026, 6, 25)] / at[stamp(2026, 6, 20)]
    assert five_days == pytest.approx(0.91 ** (1 / 6), rel=5e-4)          # about -1.56 %
    assert (np.diff(series["amount"]) <= 0).all()                        # never up
    others = query(path, "select count(distinct price_amount) as n from observations "
                         "where source <> 'idc_test' group by offer_id")
    assert (others["n"] == 1).all()


def test_fx_move_changes_cny_not_the_listed_amount(tmp_path):
    at = datetime(2026, 6, 22, 12, tzinfo=UTC)
    path = tmp_path / "fx.db"
    simulate(path, offers=mixed_offers(), start=JUNE_20, days=4, seed=7, noise_pct=0,
             build_models=False, effects=[FxMove("USD", 5, at), FxMove("EUR", -4, at)])
    rows = query(path, """
        select offer_id, observed_at >= ? as after, min(price_amount::double) as amount,
               max(price_amount::double) as amount_max,
               min(price_per_gpu_hour_cny::double) as cny, max(price_per_gpu_hour_cny::double)
                   as cny_max,
               min(price_per_gpu_hour_usd::double) as usd, max(price_per_gpu_hour_usd::double)
                   as usd_max
        from observations group by all""", [at]).set_index(["offer_id", "after"])
    assert (rows["amount"] == rows["amount_max"]).all()       # listed amounts never move
    assert (rows["cny"] == rows["cny_max"]).all() and (rows["usd"] == rows["usd_max"]).all()
    for offer, pct, moves_usd in (("us-1", 5, False), ("eu-1", -4, True)):
        before, after = rows.loc[(offer, False)], rows.loc[(offer, True)]
        assert after.amount == before.amount
        assert after.cny == pytest.approx(before.cny * (1 + pct / 100), abs=2e-6)
        expected_usd = before.usd * (1 + pct / 100) if moves_usd else before.usd
        assert after.usd == pytest.approx(expected_usd, abs=2e-6)
    for offer in ("bj-1", "cn-abroad"):
        assert rows.loc[(offer, False)].cny == rows.loc[(offer, True)].cny


def test_time_effect_specs_parse_and_refuse_nonsense(tmp_path):
    assert Trend.parse("-9") == Trend(-9.0)
    assert Trend.parse("-9:autodl_cn,idc_ulanqab") == Trend(-9.0, ("autodl_cn", "idc_ulanqab"))
    assert MonthEndChurn.parse("vanish") == MonthEndChurn("vanish")
    assert MonthEndChurn.parse("appear:autodl_cn:3:0.25") == MonthEndChurn(
        "appear", ("autodl_cn",), 3, 0.25)
    assert MonthEndChurn.parse("vanish::7") == MonthEndChurn("vanish", None, 7)
    assert FxMove.parse("usd:5:2026-07-10T00:00") == FxMove(
        "USD", 5.0, datetime(2026, 7, 10, tzinfo=UTC))
    for bad in ("Trend.parse('x')", "Trend.parse('-100')", "MonthEndChurn.parse('gone')",
                "MonthEndChurn.parse('vanish::0')", "MonthEndChurn.parse('vanish:::1.5')",
                "FxMove.parse('CNY:5:2026-07-10')", "FxMove.parse('USD:5')"):
        with pytest.raises(SimulationError):
            eval(bad)
    for effect in (Trend(-9, ("nope",)), MonthEndChurn("vanish", ("nope",))):
        with pytest.raises(SimulationError, match="no offers"):
            simulate(tmp_path / "x.db", offers=mixed_offers(), start=JUNE_20, days=1,
                     effects=[effect], build_models=False)
    # a currency nobody lists: nothing to move, and the summary says so
    result = simulate(tmp_path / "x.db", offers=mixed_offers(), start=JUNE_20, days=1,
                      effects=[FxMove("JPY", 5, JUNE_20)], build_models=False)
    assert any("no offers listed in JPY" in note for note in result.notes)
    assert query(tmp_path / "x.db", "select count(*) as n from truth.offer_effects")["n"][0] == 0


# ----------------------------------------------------------------------------------------------
# append_hour continues every effect exactly
# ----------------------------------------------------------------------------------------------

def test_append_hour_continues_every_time_effect_like_a_longer_simulation(tmp_path):
    """Across the Beijing month-end boundary (25 June 16:00 UTC), with a trend counted from the
    start (read back from truth.scenario), churn both ways, an fx move, a dip and a drop."""
    start = datetime(2026, 6, 24, tzinfo=UTC)
    effects = [Trend(-9), MonthEndChurn("vanish", ("idc_test",), share=1.0),
               MonthEndChurn("appear", ("cloud_cn",), share=1.0),
               FxMove("USD", 5, start + timedelta(hours=30)),
               MonthEndDip(6, ("cloud_us",), days=5),
               PriceDrop("cloud_eu", 3, start + timedelta(hours=35))]
    offers = mixed_offers()
    longer, shorter = tmp_path / "longer.db", tmp_path / "shorter.db"
    simulate(longer, offers=offers, start=start, days=3, seed=8, effects=effects,
             build_models=False)
    simulate(shorter, offers=offers, start=start, days=1, seed=8, effects=effects,
             build_models=False)
    for h in range(24, 44):
        append_hour(shorter, start + timedelta(hours=h), offers, effects, 8)
    con = duckdb.connect()
    try:
        con.execute(f"attach '{longer}' as a (read_only)")
        con.execute(f"attach '{shorter}' as b (read_only)")
        first_44 = "observed_hour < timestamptz '2026-06-25 20:00:00+00'"
        crawl_columns = "crawl_id, source, offers, normalized_rows"
        for x, y in (("a", "b"), ("b", "a")):
            assert con.execute(f"select count(*) from (select * from {x}.observations "
                               f"where {first_44} except all select * from {y}.observations "
                               f"where {first_44})").fetchone()[0] == 0
            assert con.execute(f"select count(*) from (select {crawl_columns} from "
                               f"{x}.raw.crawls where started_at < timestamptz "
                               f"'2026-06-25 20:00:00+00' except all select {crawl_columns} "
                               f"from {y}.raw.crawls where started_at < timestamptz "
                               f"'2026-06-25 20:00:00+00')").fetchone()[0] == 0
        # the appended hours crossed the boundary: idc_test vanished, cloud_cn's clone appeared
        assert con.execute("select count(*) from b.observations where offer_id = 'bj-1' and "
                           "observed_hour >= timestamptz '2026-06-25 16:00:00+00'"
                           ).fetchone()[0] == 0
        assert con.execute("select count(*) from b.observations where offer_id = "
                           "'cn-abroad#month-end'").fetchone()[0] == 4
        assert con.execute("select count(*) from b.truth.scenario").fetchone()[0] == 1
    finally:
        con.close()
