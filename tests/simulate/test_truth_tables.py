"""The simulator records its truth: truth.scenario (one row per simulation, its effects as JSON)
and truth.offer_effects (one row per injected effect and affected offer), for every time effect
and every structural effect, in every simulated database."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import duckdb
import pandas as pd
import pytest

from pipelines.simulate import (
    FxMove,
    MonthEndChurn,
    MonthEndDip,
    MonthlyRatio,
    PriceDrop,
    RegionalGap,
    RegionCopy,
    ServerRatio,
    SliceRatio,
    SpotRatio,
    Trend,
    append_hour,
    apply_structure,
    local_time_zone,
    simulate,
)
from pipelines.simulate.offers import as_frame
from tests.helpers.simulated import make_offer, query

START = datetime(2026, 6, 20, tzinfo=UTC)
DROP_AT = START + timedelta(days=2, hours=5)
FX_AT = START + timedelta(days=3)
TRUTH_TABLES = {("truth", "scenario"), ("truth", "offer_effects")}


def structured_offers() -> pd.DataFrame:
    """One IDC vendor with a whole card, a slice, an 8-GPU server, a spot and a monthly offer in
    Beijing and a whole card in Inner Mongolia; a vendor listing one line in two regions at two
    prices; a USD vendor."""
    beijing = dict(source="idc_test", vendor="V1", kind="idc")
    return pd.DataFrame([
        make_offer("whole", amount="12.00", **beijing),
        make_offer("slice", amount="7.00", fraction="0.5", **beijing),
        make_offer("server", amount="90.00", gpu_count=8, **beijing),
        make_offer("spot", amount="8.00", offer_kind="spot", **beijing),
        make_offer("monthly", amount="8000", period="month", **beijing),
        make_offer("im-whole", amount="11.00", province="Inner Mongolia", tier1=False, **beijing),
        make_offer("copy-bj", "copy_cn", amount="10.00"),
        make_offer("copy-gz", "copy_cn", amount="9.00", province="Guizhou", tier1=False),
        make_offer("us-1", "cloud_us", country="US", currency="USD", amount="2.50",
                   province="California", tier1=False),
    ])


TIME_EFFECTS = [MonthEndDip(6, ("idc_test",), days=4), Trend(-9, ("copy_cn",)),
                PriceDrop("cloud_us", 12, DROP_AT), FxMove("USD", 5, FX_AT),
                MonthEndChurn("vanish", ("cloud_us",), share=1.0),
                MonthEndChurn("appear", ("copy_cn",), share=1.0)]
STRUCTURAL = [RegionalGap("Inner Mongolia", 20, clone=False), RegionCopy(("copy_cn",)),
              SliceRatio(0.4), ServerRatio(0.9), SpotRatio(0.5), MonthlyRatio(0.8)]
EFFECTS = TIME_EFFECTS + STRUCTURAL


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    path = tmp_path_factory.mktemp("truth") / "scenario.db"
    result = simulate(path, offers=structured_offers(), start=START, days=12, seed=21,
                      every_hours=2, noise_pct=1.5, effects=EFFECTS, build_models=False)
    return path, result


def test_truth_tables_exist_and_the_scenario_is_recorded(simulated):
    path, result = simulated
    tables = query(path, "select schema_name, table_name from duckdb_tables() "
                         "where schema_name = 'truth'")
    assert set(map(tuple, tables.to_numpy())) == TRUTH_TABLES
    scenario = query(path, "select * from truth.scenario")
    assert len(scenario) == 1
    row = scenario.iloc[0]
    assert (row.seed, row.noise_pct, row.days, row.every_hours) == (21, 1.5, 12, 2)
    assert row.start_at == pd.Timestamp(START)
    offers = query(path, "select count(distinct offer_id) as n from observations")["n"][0]
    assert row.offers == result.offers == offers
    effects = json.loads(row.effects)
    assert [e["effect"] for e in effects] == [
        "dip", "trend", "drop", "fx_move", "churn", "churn", "regional_gap", "region_copy",
        "slice_ratio", "server_ratio", "spot_ratio", "monthly_ratio"]
    assert effects[0] == {"effect": "dip", "size_pct": 6, "sources": ["idc_test"], "days": 4,
                          "availability": False}
    assert effects[3] == {"effect": "fx_move", "currency": "USD", "pct": 5,
                          "at": FX_AT.isoformat()}
    assert pd.notna(row.created_at)


def test_every_effect_writes_truth_rows_for_the_offers_it_touched(simulated):
    path, result = simulated
    truth = query(path, "select * from truth.offer_effects")
    assert result.truth_rows == len(truth)
    assert set(truth["effect"]) == {
        "dip", "trend", "drop", "fx_move", "churn_vanish", "churn_appear", "regional_gap",
        "region_copy", "slice_ratio", "server_ratio", "spot_ratio", "monthly_ratio"}
    listed = set(query(path, "select distinct offer_id from observations")["offer_id"])
    assert set(truth["offer_id"]) <= listed

    def rows(effect: str) -> pd.DataFrame:
        return truth[truth["effect"] == effect].set_index("offer_id")

    dip = rows("dip")
    assert set(dip.index) == {"whole", "slice", "server", "spot", "monthly", "im-whole"}
    assert (dip["size_pct"] == 6).all() and (dip["time_zone"] == "Asia/Shanghai").all()
    assert dip["starts_at"].isna().all() and dip["ends_at"].isna().all()
    assert {json.loads(d)["days"] for d in dip["detail"]} == {4}
    trend = rows("trend")
    assert set(trend.index) == {"copy-bj", "copy-gz", "copy-bj#month-end", "copy-gz#month-end"}
    assert (trend["size_pct"] == -9).all() and (trend["starts_at"] == pd.Timestamp(START)).all()
    drop = rows("drop")
    assert list(drop.index) == ["us-1"] and drop["size_pct"].iat[0] == 12
    assert drop["starts_at"].iat[0] == pd.Timestamp(DROP_AT)
    fx = rows("fx_move")
    assert list(fx.index) == ["us-1"] and fx["size_pct"].iat[0] == 5
    assert json.loads(fx["detail"].iat[0])["currency"] == "USD"
    vanish, appear = rows("churn_vanish"), rows("churn_appear")
    assert list(vanish.index) == ["us-1"] and (vanish["time_zone"] == "UTC").all()
    assert set(appear.index) == {"copy-bj#month-end", "copy-gz#month-end"}
    assert {json.loads(d)["clone_of"] for d in appear["detail"]} == {"copy-bj", "copy-gz"}
    for effect in ("dip", "churn_vanish", "churn_appear"):
        zoned = rows(effect)
        assert list(zoned["time_zone"]) == [local_time_zone(s, c) for s, c in zip(
            zoned["source"], ["US" if s == "cloud_us" else "CN" for s in zoned["source"]],
            strict=True)]


def test_structural_truth_rows_are_the_ones_apply_structure_returns(simulated):
    path, _ = simulated
    _, expected, _ = apply_structure(as_frame(structured_offers()), EFFECTS, 21)
    assert expected, "the offers must give every structural effect something to do"
    written = query(path, """
        select effect, offer_id, reference_offer_id, size_pct, ratio from truth.offer_effects
        where effect in ('regional_gap', 'region_copy', 'slice_ratio', 'server_ratio',
                         'spot_ratio', 'monthly_ratio') order by effect, offer_id""")
    frame = pd.DataFrame(expected)[list(written.columns)].sort_values(["effect", "offer_id"])
    assert set(frame["effect"]) == {"regional_gap", "region_copy", "slice_ratio", "server_ratio",
                                    "spot_ratio", "monthly_ratio"}
    assert len(written) == len(frame)
    assert list(written["offer_id"]) == list(frame["offer_id"])
    assert list(written["reference_offer_id"]) == list(frame["reference_offer_id"])
    assert written["ratio"].to_numpy() == pytest.approx(frame["ratio"].astype(float).to_numpy())


def test_a_new_simulation_replaces_the_truth(simulated, tmp_path):
    path = tmp_path / "again.db"
    simulate(path, offers=structured_offers(), start=START, days=2, effects=EFFECTS,
             build_models=False)
    simulate(path, offers=structured_offers(), start=START, days=2, build_models=False)
    assert query(path, "select count(*) as n from truth.scenario")["n"][0] == 1
    assert query(path, "select count(*) as n from truth.offer_effects")["n"][0] == 0
    assert query(path, "select effects::varchar as e from truth.scenario")["e"][0] == "[]"


def test_truth_tables_are_present_after_append_hour(tmp_path):
    """append_hour on a database that has them keeps them as they are; on one simulated before
    they existed it creates them, with the start of its observations as the scenario's start."""
    path = tmp_path / "append.db"
    offers = structured_offers()
    simulate(path, offers=offers, start=START, days=1, effects=EFFECTS, build_models=False)
    before = query(path, "select * from truth.offer_effects order by all")
    append_hour(path, START + timedelta(hours=24), offers, EFFECTS)
    after = query(path, "select * from truth.offer_effects order by all")
    assert before.equals(after)
    assert query(path, "select count(*) as n from truth.scenario")["n"][0] == 1
    con = duckdb.connect(str(path))
    con.execute("drop schema truth cascade")
    con.close()
    assert append_hour(path, START + timedelta(hours=25), offers, EFFECTS) > 0
    scenario = query(path, "select start_at, days from truth.scenario")
    assert len(scenario) == 1 and scenario["start_at"][0] == pd.Timestamp(START)
    again = query(path, "select * from truth.offer_effects order by all")
    assert len(again) == len(before)
    assert list(again["offer_id"]) == list(before["offer_id"])


def test_a_database_file_named_truth_works(tmp_path):
    """Its catalog is then called truth too: the simulator qualifies its tables with it."""
    path = tmp_path / "truth.db"
    simulate(path, offers=structured_offers(), start=START, days=1, effects=TIME_EFFECTS,
             build_models=False)
    append_hour(path, START + timedelta(hours=24), structured_offers(), TIME_EFFECTS)
    assert query(path, "select count(*) as n from truth.truth.scenario")["n"][0] == 1
    assert query(path, "select count(*) as n from truth.truth.offer_effects")["n"][0] > 0


def test_region_copies_share_one_noise_path(simulated):
    """noise_key: the copied offers (one price in every region) move together, hour by hour."""
    path, _ = simulated
    pairs = query(path, """
        select a.price_amount = b.price_amount as same, a.price_amount as amount
        from observations a join observations b using (observed_hour)
        where a.offer_id = 'copy-bj' and b.offer_id = 'copy-gz'""")
    assert len(pairs) == 12 * 12 and pairs["same"].all()
    assert pairs["amount"].nunique() > 1
