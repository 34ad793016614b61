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


@pytest.mark.parametrize("batch_size", ["0", "1000"])
def test_planned_events_are_stored_as_one_batch_and_read_back_the_same(instance, monkeypatch,
                                                                       batch_size):
    """With DAGSTER_EVENT_BATCH_SIZE set (the module sets it), a run's planned events reach
    store_event_batch and none goes through store_event; either way every planned event is in
    the run's file and the index, and the check's planned execution is recorded."""
    monkeypatch.setenv("DAGSTER_EVENT_BATCH_SIZE", batch_size)
    planned = {dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED,
               dg.DagsterEventType.ASSET_CHECK_EVALUATION_PLANNED}
    one_by_one = []
    store_event = PooledSqliteEventLogStorage.store_event

    def counted(self, event):
        if event.dagster_event_type in planned:
            one_by_one.append(event.dagster_event_type)
        store_event(self, event)

    monkeypatch.setattr(PooledSqliteEventLogStorage, "store_event", counted)
    result = dg.materialize([priced, priced_is_one], instance=instance)
    assert result.success
    assert len(one_by_one) == (0 if batch_size != "0" else 2)
    in_run = [e.dagster_event_type for e in instance.all_logs(result.run_id)
              if e.dagster_event_type in planned]
    assert sorted(in_run) == sorted(planned)
    records = instance.fetch_planned_materializations(dg.AssetKey("priced"), limit=5).records
    assert [r.run_id for r in records] == [result.run_id]
    executions = instance.event_log_storage.get_asset_check_execution_history(
        dg.AssetCheckKey(dg.AssetKey("priced"), "priced_is_one"), limit=5)
    assert [e.run_id for e in executions] == [result.run_id]
