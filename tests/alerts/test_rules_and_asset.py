"""The alert rules file (errors name the key) and the Dagster asset that detects, delivers and
reports."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

import pipelines.alerts as al
from pipelines.defs.alerts import price_alerts
from pipelines.warehouse.db import ensure_schema
from tests.helpers.alert_histories import load, obs, rules

# ------------------------------------------------------------------------------------- config

def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rules.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text, message", [
    ("[drop]\nmin_drop_pc = 10\n", "drop.min_drop_pc: unknown key"),
    ("[drop]\nmin_drop_pct = 'ten'\n", "drop.min_drop_pct: must be a number, got 'ten'"),
    ("[drop]\nmin_drop_pct = 150\n", "drop.min_drop_pct: must be a number > 0 and < 100"),
    ("[drop]\nenabled = 1\n", "drop.enabled: must be true or false, got 1"),
    ("[drop]\nmedian_days = 2.5\n", "drop.median_days: must be a whole number, got 2.5"),
    ("drop = 5\n", "drop: must be a table, got 5"),
    ("[drop]\nrequire = 'both'\n", "drop.require: 'both' is not one of any, all"),
    ("[drop]\ngpu_models = []\n", "drop: set min_drop_pct and/or min_below_median_pct"),
    ("[new_low]\ngpu_models = ['A100']\n", "new_low.gpu_models[0]: 'A100' is not one of"),
    ("[delivery]\nattempts = 0\n", "delivery.attempts: must be a whole number >= 1 and < 11"),
    ("[[watch]]\ngpu_model = 'A100-80GB'\nregion = '北京'\n",
     "watch[0].max_price_cny_per_gpu_hour: missing (required)"),
    ("[[watch]]\ngpu_model = 'A100-80GB'\nregion = 'Atlantis'\nmax_price_cny_per_gpu_hour = 9\n",
     "watch[0].region: unknown region 'Atlantis'"),
    ("[[watch]]\nregion = '北京'\nmax_price_cny_per_gpu_hour = 9\n",
     "watch[0].gpu_model: missing (required"),
    ("[[watch]]\ngpu_model = 'A100-80GB'\nregion = '北京'\nmax_price_cny_per_gpu_hour = 9\n"
     "offer_kind = 'preemptible'\n", "watch[0].offer_kind: 'preemptible' is not one of"),
    ("[alerts]\n", "alerts: unknown key"),
    ("[drop\n", "not valid TOML"),
])
def test_config_errors_name_the_key(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(al.AlertConfigError) as err:
        al.load_rules(path)
    assert str(err.value).startswith(f"{path}: ")
    assert message in str(err.value)


def test_rules_file_from_the_environment(tmp_path):
    path = write(tmp_path, "[drop]\nmin_drop_pct = 25\n")
    assert al.load_rules(env={al.CONFIG_ENV: str(path)}).drop.min_drop_pct == 25
    with pytest.raises(al.AlertConfigError, match="no such alert rules file"):
        al.load_rules(env={al.CONFIG_ENV: str(tmp_path / "nope.toml")})


def test_the_default_rules_file_is_valid():
    r = al.load_rules(al.DEFAULT_CONFIG)
    assert r.drop.enabled and r.drop.min_drop_pct == 10 and r.delivery.attempts == 3
    assert {w.region_value for w in r.watch} == {"Beijing", "Jiangsu"}


def test_workload_cheaper_threshold_is_validated(tmp_path):
    with pytest.raises(al.AlertConfigError, match=r"workload_cheaper\.min_drop_pct: must be"):
        al.load_rules(write(tmp_path, "[workload_cheaper]\nmin_drop_pct = 0\n"))
    assert al.load_rules(al.DEFAULT_CONFIG).workload_cheaper.min_drop_pct == 10


# ------------------------------------------------------------------------------------ Dagster

def work_db(tmp_path: Path) -> Path:
    """A working database whose last load holds a 12 % drop, detection already run once."""
    database = tmp_path / "work.db"
    with duckdb.connect(str(database)) as db:
        ensure_schema(db)
        load(db, [obs(100, day=0)])
        al.detect_alerts(db, rules())
        load(db, [obs(88, day=1)])
    return database


def materialize(database: Path, **kwargs) -> dg.ExecuteInProcessResult:
    return dg.materialize([price_alerts], resources={"duckdb": DuckDBResource(
        database=str(database))}, **kwargs)


def metadata(result: dg.ExecuteInProcessResult) -> dict:
    [materialization] = result.asset_materializations_for_node("alerts__price_alerts")
    return {k: v.value for k, v in materialization.metadata.items()}


def failure_message(result: dg.ExecuteInProcessResult) -> str:
    [event] = result.get_step_failure_events()
    return event.step_failure_data.user_failure_data.description


def test_asset_detects_delivers_and_reports(tmp_path, receiver, monkeypatch):
    database = work_db(tmp_path)
    monkeypatch.setenv(al.CONFIG_ENV, str(write(tmp_path, "[delivery]\nbackoff_seconds = 0\n")))
    monkeypatch.setenv(al.NOTIFY_URLS_ENV, receiver.url)
    result = materialize(database)
    assert result.success
    meta = metadata(result)
    # The default rules: the 12 % drop is also a new low for the card in Beijing.
    assert (meta["detected"], meta["delivered"], meta["failed"], meta["pending"]) == (2, 2, 0, 0)
    assert meta["detected_by_rule"] == {"drop": 1, "new_low": 1, "month_end_dip": 0, "watch": 0,
                                        "workload_cheaper": 0,   # no advisor history here
                                        "back_in_stock": 0}
    assert sorted(p["json"]["title"].split(":")[0] for p in receiver.posts) == \
        ["New low for A100-80GB on_demand in Beijing", "Price drop -12.0 %"]
    assert price_alerts.key == dg.AssetKey(["alerts", "price_alerts"])
    # the models the rules' SQL reads (derived from it), and the advisor
    assert {k.to_user_string() for k in price_alerts.dependency_keys} == {
        "marts/latest_prices", "marts/month_end_dip_alerts", "intermediate/int_price_changes",
        "intermediate/int_offer_daily", "advisor/workload_advice", "marts/held_observations",
        "staging/stg_observations"}


def test_asset_without_urls_keeps_alerts_pending(tmp_path, monkeypatch):
    database = work_db(tmp_path)
    monkeypatch.setenv(al.CONFIG_ENV, str(write(tmp_path, "")))
    monkeypatch.delenv(al.NOTIFY_URLS_ENV, raising=False)
    monkeypatch.delenv(al.NOTIFY_CONFIG_ENV, raising=False)
    result = materialize(database)
    meta = metadata(result)
    assert result.success and (meta["detected"], meta["delivered"], meta["pending"]) == (2, 0, 2)
    assert "no notification URLs configured" in meta["delivery"]


def test_asset_with_a_bad_url_fails_and_keeps_the_alerts(tmp_path, monkeypatch):
    database = work_db(tmp_path)
    monkeypatch.setenv(al.CONFIG_ENV, str(write(tmp_path, "")))
    monkeypatch.setenv(al.NOTIFY_URLS_ENV, "nosuchscheme://s3cret-t0ken/")
    result = materialize(database, raise_on_error=False)
    assert not result.success
    message = failure_message(result)
    assert "entry 1 (scheme 'nosuchscheme')" in message and "2 new alerts wait" in message
    assert "s3cret-t0ken" not in message
    with duckdb.connect(str(database), read_only=True) as db:
        assert db.execute("select count(*) from alerts.outbox where status = 'pending'"
                          ).fetchone()[0] == 2


def test_asset_with_a_bad_rules_file_fails_naming_the_key(tmp_path, monkeypatch):
    database = work_db(tmp_path)
    monkeypatch.setenv(al.CONFIG_ENV, str(write(tmp_path, "[new_low]\nmin_improvment_pct = 1\n")))
    result = materialize(database, raise_on_error=False)
    assert not result.success
    assert "new_low.min_improvment_pct: unknown key" in failure_message(result)
