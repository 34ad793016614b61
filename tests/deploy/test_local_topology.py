"""The hourly schedule as deployed (docs/deploy/: Postgres, the code server, the daemon, the
webserver as separate processes on 127.0.0.1), ticking every minute (GPUPRICES_SCRAPE_CRON):
what a deployment meets first. One topology for the module; each test starts the schedule,
waits for the ticks it needs and stops it again, so the next test starts with an empty queue.
The tests run in order and build on the runs before them (history, freshness).

Holding the data directory's lock (pipelines/run_lock.py) from the test makes a launched run
wait at its start for as long as the test likes: that is how a tick is made to fire while the
previous run is still running, and how the daemon is restarted mid-run."""

from __future__ import annotations

import os
import shutil
import signal
import time
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster._core.storage.tags import SCHEDULED_EXECUTION_TIME_TAG

from pipelines.deploy.topology import LOCATION, LocalTopology, Ports
from pipelines.run_lock import run_lock
from spiders.layout import SNAPSHOT_DIR
from tests.deploy.deployed import EVERY_MINUTE, Deployed, tick_time, wait_for
from tests.helpers.receivers import Receiver, free_port

pytestmark = pytest.mark.e2e

BROKEN_SOURCE = "idc_sinnet_bj"         # an HTML source: its page "changed" to one with no table
FRESHNESS_HOURS = 0.01                  # 36 s: a source failing two ticks running is stale
FAILED_SOURCES_TITLE = "source(s) failed to crawl"   # the failed-source sensor's notice
KILLED_RUN_FAILED_WITHIN = 60.0         # seconds from SIGKILL to the run marked failed


@pytest.fixture(scope="module")
def deployed(tmp_path_factory, postgres_dir):
    root = tmp_path_factory.mktemp("deployed")
    snapshots = root / "snapshots"
    shutil.copytree(SNAPSHOT_DIR, snapshots)
    receiver = Receiver()
    topology = LocalTopology(
        root / "deploy", Ports(postgres=free_port(), code=free_port(), webserver=free_port()),
        env={"GPUPRICES_DATA_DIR": str(root / "data"), "GPUPRICES_SNAPSHOT_DIR": str(snapshots),
             "GPUPRICES_SCRAPE_CRON": EVERY_MINUTE, "GPUPRICES_EXECUTOR": "in_process",
             "GPUPRICES_LOCK_WAIT": "900", "GPUPRICES_FRESHNESS_HOURS": str(FRESHNESS_HOURS),
             "GPUPRICES_NOTIFY_URLS": receiver.url},
        postgres_dir=postgres_dir)
    started = time.monotonic()
    with pytest.MonkeyPatch.context() as env:
        try:
            topology.start()
            for name, value in topology.process_env().items():
                if name.startswith(("DAGSTER_PG_", "DAGSTER_COMPUTE_LOGS_DIR")):
                    env.setenv(name, value)
            with dg.DagsterInstance.from_config(str(topology.home)) as instance:
                deployed = Deployed(topology, root / "data", instance, receiver=receiver,
                                    snapshots=snapshots)
                deployed.figures["topology up (s)"] = time.monotonic() - started
                yield deployed
                deployed.set_schedule(False)
                print("\nFIGURES " + ", ".join(f"{k}: {v:.1f}" for k, v in
                                               deployed.figures.items()))
        finally:
            topology.stop()
            receiver.stop()


def published(deployed: Deployed, sql: str) -> list[tuple]:
    with duckdb.connect(str(deployed.data_dir / "prices.db"), read_only=True) as con:
        return con.execute(sql).fetchall()


def materialized_at(deployed: Deployed, run_id: str, key: list[str]) -> float:
    records = deployed.events(run_id, dg.DagsterEventType.ASSET_MATERIALIZATION)
    [stamp] = [r.event_log_entry.timestamp for r in records
               if r.event_log_entry.dagster_event.asset_key == dg.AssetKey(key)]
    return stamp


def test_a_tick_launches_a_run_through_the_queue_that_publishes_the_database(deployed):
    deployed.set_schedule(True)
    run = deployed.new_scheduled_run(after=set())
    deployed.set_schedule(False)
    run = deployed.wait_finished(run.run_id)
    assert run.status == dg.DagsterRunStatus.SUCCESS
    assert run.tags["dagster/code_location"] == LOCATION   # what the run queue's limit counts
    kinds = [r.event_log_entry.dagster_event_type for r in
             deployed.instance.get_records_for_run(run.run_id).records]
    # queued by the run coordinator, then launched by the daemon's queue through the code server
    assert kinds.index(dg.DagsterEventType.RUN_ENQUEUED) < kinds.index(
        dg.DagsterEventType.RUN_STARTING) < kinds.index(dg.DagsterEventType.RUN_START)
    sources = dict(published(deployed, "select source, count(*) from observations group by 1"))
    assert len(sources) > 10 and sum(sources.values()) > 500
    assert {"azure", BROKEN_SOURCE} <= set(sources)
    tick = tick_time(run).timestamp()
    deployed.figures["tick -> published prices.db (s)"] = (
        materialized_at(deployed, run.run_id, ["feeds", "prices_db"]) - tick)
    deployed.figures["tick -> run start (s)"] = (
        deployed.instance.get_run_record_by_id(run.run_id).start_time - tick)
    assert (deployed.data_dir / "prices.db").stat().st_mtime > tick
    # what a run writes to Postgres: the cost of putting the storage on another machine
    deployed.figures["events stored per run"] = len(
        deployed.instance.get_records_for_run(run.run_id, limit=100_000).records)


def test_a_tick_while_a_run_runs_queues_and_a_killed_worker_fails_its_run(deployed):
    """The next tick's run waits in the queue (one run of the location at a time) while the
    first runs; the first run's worker SIGKILLed mid-step: the run is marked failed, the queue
    moves on, and the runs after it land everything (the lock the dead worker held is free)."""
    before = {r.run_id for r in deployed.scheduled_runs()}
    with run_lock(deployed.data_dir, "tests/deploy: holding the run back", 0):
        deployed.set_schedule(True)
        first = deployed.new_scheduled_run(after=before)
        deployed.wait_status(first.run_id, {dg.DagsterRunStatus.STARTED}, 120)
        second = deployed.new_scheduled_run(after=before | {first.run_id})
        deployed.set_schedule(False)
        time.sleep(12)   # two dequeue intervals (run_queue.dequeue_interval_seconds: 5)
        assert deployed.run(second.run_id).status == dg.DagsterRunStatus.QUEUED
        assert deployed.run(first.run_id).status == dg.DagsterRunStatus.STARTED
    pid = deployed.worker_pid(first.run_id)   # reported once it holds the lock
    wait_for("the first run starts its first step", lambda: deployed.events(
        first.run_id, dg.DagsterEventType.STEP_START), 120)
    time.sleep(2)    # inside the crawl
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    failed = deployed.wait_status(first.run_id, {dg.DagsterRunStatus.FAILURE},
                                  KILLED_RUN_FAILED_WITHIN)
    deployed.figures["SIGKILL -> run marked failed (s)"] = time.monotonic() - killed
    assert failed.status == dg.DagsterRunStatus.FAILURE
    # the queue moves on: the queued tick's run, and the failed run's one retry (run_retries)
    retry = wait_for("the killed run is retried", lambda: deployed.retries_of(first.run_id), 120)
    for run_id in (second.run_id, retry[0].run_id):
        assert deployed.wait_finished(run_id).status == dg.DagsterRunStatus.SUCCESS, run_id
    # the runs after it landed their crawls, and nothing is left half-loaded: no passing crawl
    # of any run (the killed one's included) is still pending
    landed = dict(published(deployed, "select run_id, count(*) from raw.crawls where passed "
                                      "and normalized_at is not null group by 1"))
    assert landed.get(second.run_id, 0) > 10 and landed.get(retry[0].run_id, 0) > 10, landed
    assert published(deployed, "select count(*) from raw.crawls where passed "
                               "and normalized_at is null") == [(0,)]


def test_the_daemon_killed_mid_run_resumes_ticking_without_duplicate_runs(deployed):
    before = {r.run_id for r in deployed.scheduled_runs()}
    with run_lock(deployed.data_dir, "tests/deploy: holding the run back", 0):
        deployed.set_schedule(True)
        running = deployed.new_scheduled_run(after=before)
        deployed.wait_status(running.run_id, {dg.DagsterRunStatus.STARTED}, 120)
        daemon = deployed.topology.procs["daemon"]
        os.killpg(daemon.pid, signal.SIGKILL)
        daemon.wait(30)
        deployed.topology.procs.pop("daemon")
        deployed.topology.start_service("daemon")
        after_restart = datetime.now(UTC)
        resumed = wait_for("a tick after the restart", lambda: [
            r for r in deployed.scheduled_runs() if tick_time(r) > after_restart], 150)
        deployed.set_schedule(False)
    assert deployed.wait_finished(running.run_id).status == dg.DagsterRunStatus.SUCCESS
    for run in deployed.scheduled_runs():
        if run.run_id not in before:
            assert deployed.wait_finished(run.run_id).status == dg.DagsterRunStatus.SUCCESS
    assert resumed
    ticks = [r.tags[SCHEDULED_EXECUTION_TIME_TAG] for r in deployed.scheduled_runs()]
    assert len(ticks) == len(set(ticks)), sorted(ticks)   # one run per tick, restarts or not


def break_source(snapshots: Path) -> None:
    (snapshots / BROKEN_SOURCE / "gpu_price.html").write_text(
        "<html><body><p>Under maintenance</p></body></html>", encoding="utf-8")


def stale_sources(deployed: Deployed, run_id: str) -> list[str] | None:
    """The sources the run's freshness check named stale (None: it did not evaluate)."""
    for record in deployed.events(run_id, dg.DagsterEventType.ASSET_CHECK_EVALUATION):
        evaluation = record.event_log_entry.dagster_event.event_specific_data
        if evaluation.check_name == "sources_are_fresh":
            stale = evaluation.metadata["stale"].value
            return sorted(entry["source"] for entry in stale)
    return None


def test_a_source_failing_beyond_the_freshness_window_raises_the_alerts(deployed):
    """The failed-source sensor tells people at its first failed crawl (once: the same reason
    again is not sent twice), and once it has failed for longer than GPUPRICES_FRESHNESS_HOURS
    the freshness check names it stale; the runs still succeed (both are warnings)."""
    runs = deployed.scheduled_runs()
    before = {r.run_id for r in runs}
    # what was stale already: sources never crawled (a token-only source without its key)
    already = stale_sources(deployed, runs[-1].run_id)
    assert already is not None and BROKEN_SOURCE not in already
    break_source(deployed.snapshots)
    deployed.set_schedule(True)
    try:
        def stale_run():
            for run in deployed.scheduled_runs():
                if run.run_id not in before and run.status in (dg.DagsterRunStatus.SUCCESS,
                                                               dg.DagsterRunStatus.FAILURE):
                    assert run.status == dg.DagsterRunStatus.SUCCESS, run.run_id
                    if BROKEN_SOURCE in (stale_sources(deployed, run.run_id) or []):
                        return run
            return None
        run = wait_for(f"{BROKEN_SOURCE} named stale", stale_run, 420, every=2)
    finally:
        deployed.set_schedule(False)
        shutil.copy(SNAPSHOT_DIR / BROKEN_SOURCE / "gpu_price.html",
                    deployed.snapshots / BROKEN_SOURCE / "gpu_price.html")
    assert stale_sources(deployed, run.run_id) == sorted([*already, BROKEN_SOURCE])
    notices = wait_for("the failed-source notice arrives", lambda: [
        p["json"] for p in deployed.receiver.posts
        if FAILED_SOURCES_TITLE in p["json"].get("title", "")], 90)
    assert all(BROKEN_SOURCE in n["message"] for n in notices)
    # the same failure, reported by the sensor after each run, reaches people once
    assert len({(n["title"], n["message"]) for n in notices}) == len(notices), notices
