"""The project's instance (dagster.yaml) keeps Dagster's SQLite event log in Dagster's own files,
with one pooled engine per file instead of a new engine and connection per event
(pipelines/instance_event_log.py)."""

import shutil

import dagster as dg
import pytest

from pipelines.instance_event_log import OPEN_FILES, PooledSqliteEventLogStorage
from spiders.layout import REPO_ROOT


@dg.asset
def priced():
    return 1


@dg.asset_check(asset=priced)
def priced_is_one():
    return dg.AssetCheckResult(passed=True)


@pytest.fixture
def instance(tmp_path, monkeypatch):
    shutil.copy(REPO_ROOT / "dagster.yaml", tmp_path / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        yield instance


def test_events_land_in_dagsters_own_files_and_read_back(instance, tmp_path):
    storage = instance.event_log_storage
    assert isinstance(storage, PooledSqliteEventLogStorage)
    result = dg.materialize([priced, priced_is_one], instance=instance)
    assert result.success
    # the layout of Dagster's default SQLite storage: a file per run beside the index
    assert (tmp_path / "history" / "runs" / f"{result.run_id}.db").exists()
    assert (tmp_path / "history" / "runs" / "index.db").exists()
    assert instance.get_latest_materialization_event(dg.AssetKey("priced")) is not None
    types = {e.dagster_event_type for e in instance.all_logs(result.run_id)
             if e.dagster_event_type}
    assert {dg.DagsterEventType.ASSET_MATERIALIZATION, dg.DagsterEventType.RUN_SUCCESS,
            dg.DagsterEventType.ASSET_CHECK_EVALUATION} <= types
    # one engine per file, kept across the run's events
    assert {shard for _, shard in storage._engines} == {result.run_id, "index"}


def test_engines_beyond_the_open_files_are_closed(instance):
    storage = instance.event_log_storage
    for n in range(OPEN_FILES + 3):
        with storage.run_connection(f"run-{n}") as conn:
            conn.exec_driver_sql("select 1")
    assert len(storage._engines) == OPEN_FILES
    assert {shard for _, shard in storage._engines} == {f"run-{n}"
                                                       for n in range(3, OPEN_FILES + 3)}
