"""Sensors tell people through the alert channels when a run fails, or when sources failed in a
run that otherwise succeeded (delivered to a real webhook on 127.0.0.1)."""

import dagster as dg
import pytest

from pipelines.defs.automation import (
    failed_source_alert_sensor,
    failed_sources,
    run_failure_alert_sensor,
)
from pipelines.defs.ingest import CRAWL_CHECK
from tests.helpers.receivers import Receiver


@pytest.fixture
def channel(tmp_path, monkeypatch):
    receiver = Receiver()
    monkeypatch.setenv("GPUPRICES_NOTIFY_URLS", receiver.url)
    monkeypatch.setenv("GPUPRICES_DATA_DIR", str(tmp_path / "data"))
    yield receiver
    receiver.stop()


@dg.asset(key=["raw", "flaky_idc"],
          check_specs=[dg.AssetCheckSpec(CRAWL_CHECK, asset=["raw", "flaky_idc"])])
def flaky_source():
    yield dg.MaterializeResult(check_results=[dg.AssetCheckResult(
        check_name=CRAWL_CHECK, passed=False, severity=dg.AssetCheckSeverity.ERROR,
        description="only 0 offers collected (expected at least 8)")])


@dg.asset
def broken_step():
    raise RuntimeError("disk full")


def test_failed_sources_are_reported(channel):
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize([flaky_source], instance=instance)
    assert failed_sources(instance, result.run_id) == [
        ("flaky_idc", "only 0 offers collected (expected at least 8)")]
    context = dg.build_run_status_sensor_context(
        sensor_name="failed_source_alert_sensor", dagster_event=result.get_run_success_event(),
        dagster_instance=instance, dagster_run=result.dagster_run)
    failed_source_alert_sensor(context)
    [post] = channel.posts
    assert "1 source(s) failed" in post["json"]["title"]
    assert "flaky_idc: only 0 offers collected" in post["json"]["message"]


def test_a_failed_run_is_reported(channel):
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize([broken_step], instance=instance, raise_on_error=False)
    failure = next(e for e in result.all_events if e.event_type_value == "PIPELINE_FAILURE")
    context = dg.build_run_status_sensor_context(
        sensor_name="run_failure_alert_sensor", dagster_event=failure, dagster_instance=instance,
        dagster_run=result.dagster_run).for_run_failure()
    run_failure_alert_sensor(context)
    [post] = channel.posts
    assert post["json"]["title"].startswith("gpuprices run failed")
    assert result.run_id in post["json"]["message"]
