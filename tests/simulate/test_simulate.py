"""The history simulator: a reproducible, consistent history, and every signal measured against the
truth that was injected (month-end dip, regional gap, price drop). Incremental builds:
test_incremental_builds.py; the command: test_command.py; new time effects: test_time_effects.py;
the truth tables: test_truth_tables.py.

The offers are the real ones of three configured IDC sources (crawled once from the bundled
snapshots, no browser needed): Sinnet (Beijing, tier-1), Ulanqab (Inner Mongolia) and Nanjing
(Jiangsu). Histories are short and coarse (every 3-6 hours) to keep the file fast.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from pipelines.simulate import (
    DUCKDB_CONFIG,
    MonthEndDip,
    PriceDrop,
    RegionalGap,
    SimulationError,
    append_hour,
    check_target,
    hour_plan,
    load_offers,
    simulate,
)
from pipelines.verdicts import HOLDS
from pipelines.warehouse.db import ensure_schema
from spiders.layout import db_path as real_db_path
from spiders.parsing.currencies import fx_rate
from spiders.parsing.prices import HOURS_PER_PERIOD
from tests.helpers.simulated import query

SOURCES = ["idc_sinnet_bj", "idc_ulanqab", "idc_nanjing"]
START = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def offers() -> pd.DataFrame:
    return load_offers(sources=SOURCES)


@pytest.fixture(scope="module")
def sims(tmp_path_factory):
    """Simulated databases by scenario, built once per module."""
    root = tmp_path_factory.mktemp("sims")
    built: dict[str, Path] = {}

    def get(name: str, offers: pd.DataFrame, **kwargs) -> Path:
        if name not in built:
            path = root / f"{name}.db"
            simulate(path, offers=offers, **kwargs)
            built[name] = path
        return built[name]

    return get


def _plain(sims, offers) -> Path:
    return sims("plain", offers, start=START, days=21, seed=7, every_hours=3)


# ----------------------------------------------------------------------------------------------
# The history itself
# ----------------------------------------------------------------------------------------------

def test_offers_come_from_the_real_sources(offers):
    assert set(offers["source"]) == set(SOURCES)
    assert offers["offer_id"].is_unique
    assert len(offers) >= 40


def test_same_seed_same_table_other_seed_other_prices(sims, offers, tmp_path):
    first = _plain(sims, offers)
    again = tmp_path / "again.db"
    simulate(again, offers=offers, start=START, days=21, seed=7, every_hours=3,
             build_models=False)
    other = tmp_path / "other.db"
    simulate(other, offers=offers, start=START, days=21, seed=8, every_hours=3,
             build_models=False)
    con = duckdb.connect()
    try:
        con.execute(f"attach '{first}' as a (read_only)")
        con.execute(f"attach '{again}' as b (read_only)")
        con.execute(f"attach '{other}' as c (read_only)")
        for x, y in (("a", "b"), ("b", "a")):
            assert con.execute(f"select count(*) from (select * from {x}.observations except all "
                               f"select * from {y}.observations)").fetchone()[0] == 0
        crawl_columns = "crawl_id, source, mode, started_at, finished_at, offers, normalized_rows"
        assert con.execute(f"select count(*) from (select {crawl_columns} from a.raw.crawls "
                           f"except all select {crawl_columns} from b.raw.crawls)"
                           ).fetchone()[0] == 0
        changed = con.execute("""
            select count(*)
            from a.observations x join c.observations y using (offer_id, observed_hour)
            where x.price_amount <> y.price_amount""").fetchone()[0]
        assert changed > 0
    finally:
        con.close()


def test_no_duplicate_natural_keys_and_one_crawl_per_source_hour(sims, offers):
    path = _plain(sims, offers)
    counts = query(path, """
        select count(*) as n, count(distinct (offer_id, observed_hour)) as natural_keys,
               count(distinct offer_id) as offers, count(distinct observed_hour) as hours
        from observations""").iloc[0]
    assert counts.n == counts.natural_keys == counts.offers * counts.hours
    assert counts.offers == len(offers)
    assert counts.hours == 21 * 24 // 3
    crawls = query(path, """
        select c.crawl_id, c.offers, c.normalized_rows, c.passed, c.status, c.mode,
               c.normalized_at, count(o.offer_id) as rows
        from raw.crawls c left join observations o using (crawl_id)
        group by all""")
    assert len(crawls) == counts.hours * len(SOURCES)
    assert (crawls["rows"] == crawls["offers"]).all()
    assert (crawls["rows"] == crawls["normalized_rows"]).all()
    assert crawls["passed"].all() and (crawls["status"] == "passed").all()
    assert (crawls["mode"] == "simulated").all() and crawls["normalized_at"].notna().all()


def test_observations_are_hourly_utc_and_within_the_hour(sims, offers):
    path = _plain(sims, offers)
    row = query(path, """
        select min(observed_hour) as first_hour, max(observed_hour) as last_hour,
               bool_and(date_trunc('hour', observed_at) = observed_hour) as within,
               bool_and(epoch(observed_hour)::bigint % 10800 = 0) as every_3h,
               count(distinct observed_at) filter (where source = 'idc_ulanqab') as ulanqab_times
        from observations""").iloc[0]
    assert row.first_hour == pd.Timestamp(START)
    assert row.last_hour == pd.Timestamp(START + timedelta(days=21) - timedelta(hours=3))
    assert row.within and row.every_3h
    assert row.ulanqab_times == 21 * 8          # one crawl time per source and hour


def test_schema_equals_a_fresh_prices_db(sims, offers, tmp_path):
    fresh = duckdb.connect(str(tmp_path / "fresh.db"))
    ensure_schema(fresh)
    fresh.close()
    # raw.model_state is the models' own bookkeeping (created by the first model build)
    sql = """
        select schema_name, table_name, sql from duckdb_tables()
        where schema_name in ('main', 'raw') and table_name <> 'model_state' order by all"""
    constraints = """
        select schema_name, table_name, constraint_type, constraint_text
        from duckdb_constraints()
        where schema_name in ('main', 'raw') and table_name <> 'model_state' order by all"""
    path = _plain(sims, offers)
    assert query(path, sql).equals(query(tmp_path / "fresh.db", sql))
    assert query(path, constraints).equals(query(tmp_path / "fresh.db", constraints))


def test_the_file_opens_in_the_storage_format_the_pipeline_uses():
    import pipelines.resources
    assert DUCKDB_CONFIG is pipelines.resources.DUCKDB_CONFIG


def test_price_amount_matches_per_gpu_hour(sims, offers):
    """price_per_gpu_hour_* = price_amount / (hours of the period x gpu_count x gpu_fraction) x
    the ECB rate of fx_rate_date, to the micro-unit, on every row."""
    path = _plain(sims, offers)
    pairs = query(path, "select distinct currency, fx_rate_date from observations")
    rates = pd.DataFrame([
        {"currency": c, "fx_rate_date": d,
         "to_cny": float(fx_rate(c, "CNY", pd.Timestamp(d).date()).rate),
         "to_usd": float(fx_rate(c, "USD", pd.Timestamp(d).date()).rate)}
        for c, d in zip(pairs["currency"], pairs["fx_rate_date"], strict=True)])
    periods = pd.DataFrame({"billing_period": list(HOURS_PER_PERIOD),
                            "hours": [float(h) for h in HOURS_PER_PERIOD.values()]})
    con = duckdb.connect(str(path), read_only=True)
    try:
        con.register("rates", rates)
        con.register("periods", periods)
        worst = con.execute("""
            select
                max(abs(price_per_gpu_hour_cny::double - price_amount::double
                        / (p.hours * gpu_count * gpu_fraction) * r.to_cny)),
                max(abs(price_per_gpu_hour_usd::double - price_amount::double
                        / (p.hours * gpu_count * gpu_fraction) * r.to_usd)),
                count(*)
            from observations o
            join periods p using (billing_period)
            join rates r on o.currency = r.currency and o.fx_rate_date = r.fx_rate_date::date
        """).fetchone()
        total = con.execute("select count(*) from observations").fetchone()[0]
    finally:
        con.close()
    assert worst[2] == total
    assert worst[0] <= 1.5e-6 and worst[1] <= 1.5e-6


def test_prices_stay_near_the_real_ones_and_stock_flips_now_and_then(sims, offers):
    path = _plain(sims, offers)
    real = offers[["offer_id", "price_amount", "available"]].rename(
        columns={"price_amount": "real_amount", "available": "real_available"})
    real["real_amount"] = real["real_amount"].astype(float)
    con = duckdb.connect(str(path), read_only=True)
    try:
        con.register("real", real)
        stats = con.execute("""
            select
                max(abs(o.price_amount::double / r.real_amount - 1)) as worst,
                count(distinct o.price_amount) filter (where true) as distinct_amounts,
                avg(case when o.available = r.real_available then 1 else 0 end) as same_stock,
                count(*) filter (where o.available is distinct from r.real_available) as flips
            from observations o join real r using (offer_id)""").fetchone()
        changes = con.execute("""
            select count(*) from (
                select offer_id, count(distinct price_amount) as n from observations group by 1)
            where n > 1""").fetchone()[0]
    finally:
        con.close()
    worst, _, same_stock, flips = stats
    assert worst <= 0.0105                      # within the +/- 1 % noise (and a price tick)
    assert changes > len(offers) / 2            # most prices moved at least once in 3 weeks
    assert 0.7 < same_stock < 1 and flips > 0   # stock flips, rarely


def test_refuses_prices_db(offers, tmp_path):
    with pytest.raises(SimulationError, match="refusing"):
        simulate(tmp_path / "prices.db", offers=offers, start=START, days=1)
    assert not (tmp_path / "prices.db").exists()
    with pytest.raises(SimulationError, match="refusing"):
        check_target(real_db_path())
    with pytest.raises(SimulationError, match="refusing"):
        append_hour(tmp_path / "PRICES.DB", START, offers)


def test_refuses_to_replace_a_database_that_was_not_simulated(offers, tmp_path):
    path = tmp_path / "mine.db"
    con = duckdb.connect(str(path))
    ensure_schema(con)
    con.execute("insert into raw.crawls (crawl_id, source, mode, passed, offers) "
                "values ('c1', 'azure', 'replay', true, 1)")
    con.close()
    with pytest.raises(SimulationError, match="not simulated"):
        simulate(path, offers=offers, start=START, days=1, build_models=False)
    for write in (append_hour, hour_plan):    # hour_plan would create the truth tables
        with pytest.raises(SimulationError, match="not simulated"):
            write(path, START, offers)
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute("select count(*) from raw.crawls").fetchone()[0] == 1
    assert not con.execute("select count(*) from duckdb_schemas() where schema_name = 'truth'"
                           ).fetchone()[0]
    con.close()


def test_append_hour_continues_exactly_like_a_longer_simulation(offers, tmp_path):
    effects = [MonthEndDip(8, ("idc_ulanqab",)),
               PriceDrop("idc_nanjing", 5, START + timedelta(hours=30))]
    longer, shorter = tmp_path / "longer.db", tmp_path / "shorter.db"
    simulate(longer, offers=offers, start=START, days=2, seed=3, effects=effects,
             build_models=False)
    simulate(shorter, offers=offers, start=START, days=1, seed=3, effects=effects,
             build_models=False)
    for h in range(24, 32):            # across the drop at hour 30
        at = START + timedelta(hours=h)
        # every other hour from a plan drawn beforehand (hour_plan), as the bench times it
        plan = hour_plan(shorter, at, offers, effects, 3) if h % 2 else None
        assert append_hour(shorter, at, offers, effects, 3, plan=plan) == len(offers)
    assert append_hour(shorter, START + timedelta(hours=31), offers, effects, 3) == 0  # no-op again
    con = duckdb.connect()
    con.execute(f"attach '{longer}' as a (read_only)")
    con.execute(f"attach '{shorter}' as b (read_only)")
    first_32 = "observed_hour < timestamptz '2026-06-02 08:00:00+00'"
    for x, y in (("a", "b"), ("b", "a")):
        assert con.execute(f"select count(*) from (select * from {x}.observations where {first_32} "
                           f"except all select * from {y}.observations where {first_32})"
                           ).fetchone()[0] == 0
    assert con.execute("select count(*) from b.raw.crawls").fetchone()[0] == 32 * len(SOURCES)
    con.close()


# ----------------------------------------------------------------------------------------------
# Signals against the injected truth (the marts of dbt_like_sql/marts/)
# ----------------------------------------------------------------------------------------------

def test_month_end_dip_is_found_where_injected_and_nowhere_else(sims, offers):
    # two months whose next month started: enough for a recurring verdict on a clear dip
    path = sims("dip", offers, start=START, days=66, seed=11, every_hours=6,
                effects=[MonthEndDip(8, ("idc_ulanqab",), days=5)])
    groups = query(path, """
        select source, gpu_model, region_code, offer_kind,
               any_value(months_observed) as months_observed,
               any_value(strength_pct) as strength_pct,
               any_value(p_value) as p_value,
               any_value(dip_verdict) as dip_verdict
        from marts.month_end_dip group by all""")
    dipped = groups[groups["source"] == "idc_ulanqab"]
    calm = groups[groups["source"] != "idc_ulanqab"]
    assert len(dipped) >= 3 and len(calm) >= 3
    assert (dipped["months_observed"] == 2).all()     # a month counts once its next one started
    assert (dipped["dip_verdict"] == HOLDS).all(), dipped
    assert ((dipped["strength_pct"] - 8).abs() <= 1).all(), dipped
    assert (dipped["p_value"] < 0.05).all(), dipped
    assert not (calm["dip_verdict"] == HOLDS).any(), calm[calm["dip_verdict"] == HOLDS]
    assert (calm["strength_pct"].fillna(0).abs() < 1.5).all(), calm


def test_regional_gap_is_measured_as_injected(sims, offers):
    """Each tier-1 vendor's Inner Mongolia offers cost 25 % less than its own tier-1 offers of the
    line (Sinnet, in Beijing only, gets clones in Ulanqab); the Ulanqab IDC, with nothing in a
    tier-1 city, keeps its prices. The same-vendor comparison finds 25, whatever the mix."""
    path = sims("gap", offers, start=START, days=61, seed=5, every_hours=6,
                effects=[RegionalGap("Inner Mongolia", 25)])
    truth = query(path, """
        select o.offer_id, o.vendor, o.size_pct, r.city as reference_city, c.city
        from truth.offer_effects o
        join (select distinct offer_id, city from observations) c using (offer_id)
        join (select distinct offer_id, city from observations) r
            on r.offer_id = o.reference_offer_id
        where o.effect = 'regional_gap'""")
    sinnet = offers.loc[offers["source"] == "idc_sinnet_bj", "vendor"]
    assert len(truth) >= 8 and set(truth["vendor"]) == set(sinnet)
    assert ((truth["size_pct"] - 25).abs() < 1e-3).all(), truth
    assert (truth["city"] == "Ulanqab").all() and (truth["reference_city"] == "Beijing").all()
    measured = query(path, """
        select gpu_model, offer_kind, billing_period, count(*) as days,
               median(discount_pct) as median_discount, min(discount_pct) as low,
               max(discount_pct) as high
        from marts.regional_discount
        where region_group = 'Inner Mongolia' and reference_price_cny_per_gpu_hour is not null
        group by all""")
    assert len(measured) >= 4                                   # A100 40/80, H800, 4090 x periods
    assert (measured["days"] == 61).all()
    assert ((measured["median_discount"] - 25).abs() <= 1).all(), measured
    assert ((measured["low"] > 22) & (measured["high"] < 28)).all(), measured
    # Jiangsu's only vendor lists nothing in a tier-1 city: nothing to pair, no discount claimed.
    jiangsu = query(path, """
        select count(*) filter (where reference_price_cny_per_gpu_hour is not null) as paired,
               count(*) as rows
        from marts.regional_discount where region_group = 'Jiangsu'""").iloc[0]
    assert jiangsu["rows"] > 0 and jiangsu["paired"] == 0


def test_price_drop_is_one_event_at_the_right_hour(sims, offers):
    at = datetime(2026, 6, 20, 13, 30, tzinfo=UTC)   # the 13:00 crawl (13:01-13:15) is before it
    path = sims("drop", offers, start=START, days=30, seed=2, every_hours=1,
                effects=[PriceDrop("idc_sinnet_bj", 12, at)])
    events = query(path, """
        select source, offer_id, observed_at, price_change_pct
        from intermediate.int_price_changes
        where change_kind = 'price' and date_trunc('hour', observed_at) = ?""",
                    [datetime(2026, 6, 20, 14, tzinfo=UTC)])
    sinnet = events[events["source"] == "idc_sinnet_bj"]
    n_sinnet = (offers["source"] == "idc_sinnet_bj").sum()
    assert len(sinnet) == n_sinnet                        # every offer of the source, once
    assert ((sinnet["price_change_pct"] + 12).abs() <= 1).all(), sinnet
    assert (sinnet["observed_at"] >= pd.Timestamp(at)).all()
    others = events[events["source"] != "idc_sinnet_bj"]
    assert (others["price_change_pct"].abs() < 2.5).all()
    # Before the drop no change of the source is larger than the noise; after it, prices stay low.
    big = query(path, """
        select date_trunc('hour', observed_at) as hour from intermediate.int_price_changes
        where source = 'idc_sinnet_bj' and change_kind = 'price' and abs(price_change_pct) > 3""")
    assert set(big["hour"]) == {pd.Timestamp(datetime(2026, 6, 20, 14, tzinfo=UTC))}


# ----------------------------------------------------------------------------------------------
# Effects and command line
# ----------------------------------------------------------------------------------------------

def test_effect_specs_parse():
    assert MonthEndDip.parse("8:autodl_cn,idc_ulanqab:5") == MonthEndDip(
        8.0, ("autodl_cn", "idc_ulanqab"), 5)
    assert MonthEndDip.parse("8") == MonthEndDip(8.0)
    assert MonthEndDip.parse("8::3", availability=True) == MonthEndDip(8.0, None, 3, True)
    assert RegionalGap.parse("Inner Mongolia:25") == RegionalGap("Inner Mongolia", 25.0)
    assert PriceDrop.parse("autodl_cn:10:2026-07-15T12:00") == PriceDrop(
        "autodl_cn", 10.0, datetime(2026, 7, 15, 12, tzinfo=UTC))
    for bad in (lambda: MonthEndDip.parse("x"), lambda: MonthEndDip.parse("120"),
                lambda: RegionalGap.parse("25"), lambda: RegionalGap.parse("Beijing:20"),
                lambda: PriceDrop.parse("autodl_cn:10")):
        with pytest.raises(SimulationError):
            bad()


def test_effects_on_unknown_sources_or_provinces_are_refused(offers, tmp_path):
    for effect in (MonthEndDip(8, ("nope",)), PriceDrop("nope", 5, START),
                   RegionalGap("Tibet", 20, clone=False), RegionalGap("Atlantis", 20)):
        with pytest.raises(SimulationError, match="no offers"):
            simulate(tmp_path / "x.db", offers=offers, start=START, days=1, effects=[effect],
                     build_models=False)


def test_dip_availability_puts_stated_offers_in_stock(offers, tmp_path):
    path = tmp_path / "stock.db"
    simulate(path, offers=offers, start=START, days=30, seed=1, every_hours=6, build_models=False,
             effects=[MonthEndDip(5, ("idc_nanjing",), days=4, availability=True)])
    # Nanjing is a Chinese vendor: its month ends by Beijing time (UTC+8)
    stock = query(path, """
        select day(timezone('Asia/Shanghai', observed_hour)) > 26 as month_end,
               avg(available::int) as in_stock
        from observations where source = 'idc_nanjing' group by 1 order by 1""")
    assert stock["in_stock"].iloc[1] == 1.0 and stock["in_stock"].iloc[0] < 1.0
