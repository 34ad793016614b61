"""The hourly schedule as deployed (docs/deploy/: Postgres, the code server, the daemon, the
webserver as separate processes on 127.0.0.1), ticking every minute (GPUPRICES_SCRAPE_CRON):
what a deployment meets first. One topology for the module and two timelines on it, each made
once by a fixture, whose facts the tests check: a first tick on an empty data directory, then
the overlap: the next tick's run held at its start while the daemon is SIGKILLed and restarted
and the tick after fires, a source's page broken, the held run's worker SIGKILLed mid-step, and
the runs after it (the later tick's, the killed run's retry) landing.

Holding the data directory's lock (pipelines/run_lock.py) from the test makes a launched run
wait at its start for as long as the test likes: that is how a tick is made to fire while the
previous run is still running, and how the daemon is restarted mid-run. Minute ticks are the
clock here, so the timelines share them instead of waiting for ticks of their own: the first
tick's run (longer than a minute) has the next tick's run wait in the queue behind it, and the
test takes the lock between the two. Switching the schedule off after the first tick and on again
for the overlap waited for the tick after the one it skipped: a minute more for the deploy tier.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster._core.storage.tags import SCHEDULED_EXECUTION_TIME_TAG

from pipelines.deploy.topology import LOCATION, LocalTopology, Ports
from pipelines.run_lock import run_lock
from spiders.default_sources import OPT_IN_ENV
from spiders.layout import SNAPSHOT_DIR
from tests.deploy.deployed import EVERY_MINUTE, Deployed, tick_time, wait_for
from tests.helpers.receivers import Receiver, free_port

BROKEN_SOURCE = "idc_sinnet_bj"         # an HTML source: its page "changed" to one with no table
FRESHNESS_HOURS = 0.01                  # 36 s: a source failing two ticks running is stale
FAILED_SOURCES_TITLE = "source(s) failed to crawl"   # the failed-source sensor's notice
KILLED_RUN_FAILED_WITHIN = 60.0         # seconds from SIGKILL to the run marked failed
HOLDER = "tests/deploy: holding the run back"
# How often the test looks for the first tick's run to finish, to take the lock before the queue
# launches the next: dequeuing (every 5 s) and starting a run worker take seconds.
FINISHED_POLL_SECONDS = 0.1


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
             "GPUPRICES_NOTIFY_URLS": receiver.url,
             # the broken source is a template, crawled only when opted in: the schedule opts
             # in to it as an operator would (spiders/default_sources.py)
             OPT_IN_ENV: BROKEN_SOURCE},
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


@pytest.fixture(scope="module")
def lock_hold(deployed) -> Iterator[ExitStack]:
    """Where the test holds the data directory's lock: taken by `first_tick`, released by
    `overlap` (closing it), at the latest when the module ends."""
    with ExitStack() as hold:
        yield hold


@pytest.fixture(scope="module")
def first_tick(deployed, lock_hold) -> dg.DagsterRun:
    """The schedule switched on, and its first tick's run on an empty data directory. The schedule
    stays on until the next tick's run exists (one run, however long this one takes); the moment
    this one finishes the test takes the lock, before the queue (one run of the location at a
    time) launches that next run, which `overlap` holds at its start."""
    deployed.set_schedule(True)
    run = deployed.new_scheduled_run(after=set())
    deployed.wait_finished(run.run_id, every=FINISHED_POLL_SECONDS,
                           meanwhile=lambda: stop_after_a_tick_beyond(deployed, {run.run_id}))
    lock_hold.enter_context(run_lock(deployed.data_dir, HOLDER, 0))
    assert deployed.succeeded(run.run_id)
    run = deployed.run(run.run_id)
    tick = tick_time(run).timestamp()
    deployed.figures["tick -> published prices.db (s)"] = (
        materialized_at(deployed, run.run_id, ["feeds", "prices_db"]) - tick)
    deployed.figures["tick -> run start (s)"] = (
        deployed.instance.get_run_record_by_id(run.run_id).start_time - tick)
    # what a run writes to Postgres: the cost of putting the storage on another machine
    deployed.figures["events stored per run"] = len(
        deployed.instance.get_records_for_run(run.run_id, limit=100_000).records)
    return run


def test_a_tick_launches_a_run_through_the_queue_that_publishes_the_database(deployed,
                                                                             first_tick):
    run = first_tick
    assert run.tags["dagster/code_location"] == LOCATION   # what the run queue's limit counts
    kinds = [r.event_log_entry.dagster_event_type for r in
             deployed.instance.get_records_for_run(run.run_id).records]
    # queued by the run coordinator, then launched by the daemon's queue through the code server
    assert kinds.index(dg.DagsterEventType.RUN_ENQUEUED) < kinds.index(
        dg.DagsterEventType.RUN_STARTING) < kinds.index(dg.DagsterEventType.RUN_START)
    sources = dict(published(deployed, "select source, count(*) from observations group by 1"))
    assert len(sources) > 10 and sum(sources.values()) > 500
    assert {"azure", BROKEN_SOURCE} <= set(sources)
    assert (deployed.data_dir / "prices.db").stat().st_mtime > tick_time(run).timestamp()


@dataclass(frozen=True)
class Overlap:
    held: dg.DagsterRun                 # the tick's run held at its start, later SIGKILLed
    next_tick: dg.DagsterRun            # the first tick after the daemon's restart
    retry: dg.DagsterRun                # the killed run's retry (run_retries: 1)
    statuses_while_held: tuple[dg.DagsterRunStatus, dg.DagsterRunStatus]
    daemon_restarted_at: datetime
    stale_before: list[str]
    before: frozenset[str]              # the scheduled runs before the overlap: the first tick's
    # ticks between the schedule's start and the daemon's restart (a second or two): seldom any
    missed: tuple[dg.DagsterRun, ...]


def stop_after_a_tick_beyond(deployed: Deployed, runs: set[str]) -> None:
    """The schedule stopped once it has launched a run not in `runs` (the next tick's)."""
    if deployed.schedule_running and any(r.run_id not in runs
                                         for r in deployed.scheduled_runs()):
        deployed.set_schedule(False)


@pytest.fixture(scope="module")
def overlap(deployed, first_tick, lock_hold) -> Overlap:
    stale_before = stale_sources(deployed, first_tick.run_id)
    before = frozenset({first_tick.run_id})
    held = deployed.new_scheduled_run(after=set(before))     # the tick after, queued behind it
    stop_after_a_tick_beyond(deployed, set(before))          # when the first run was quick
    deployed.wait_status(held.run_id, {dg.DagsterRunStatus.STARTED}, 120)
    deployed.set_schedule(True)                              # ticking while the daemon dies
    daemon = deployed.topology.procs.pop("daemon")
    os.killpg(daemon.pid, signal.SIGKILL)
    daemon.wait(30)
    deployed.topology.start_service("daemon")
    restarted_at = datetime.now(UTC)
    next_tick = deployed.new_scheduled_run(after=set(before) | {held.run_id},
                                           ticked_after=restarted_at)
    deployed.set_schedule(False)
    missed = tuple(r for r in deployed.scheduled_runs()
                   if r.run_id not in before | {held.run_id, next_tick.run_id}
                   and tick_time(r) < restarted_at)
    # submitted to the queue (a loaded machine took over 12 s), or launched at once if the queue
    # failed to hold it back; then two dequeue intervals (run_queue.dequeue_interval_seconds: 5)
    deployed.wait_status(next_tick.run_id, {dg.DagsterRunStatus.QUEUED,
                                            dg.DagsterRunStatus.STARTING,
                                            dg.DagsterRunStatus.STARTED}, 120)
    time.sleep(12)
    statuses = (deployed.run(held.run_id).status, deployed.run(next_tick.run_id).status)
    break_source(deployed.snapshots)
    lock_hold.close()                        # the held run goes on
    try:
        pid = deployed.worker_pid(held.run_id)   # reported once it holds the lock
        wait_for("the held run starts its first step", lambda: deployed.events(
            held.run_id, dg.DagsterEventType.STEP_START), 120)
        time.sleep(2)    # inside the crawl
        os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        deployed.wait_status(held.run_id, {dg.DagsterRunStatus.FAILURE},
                             KILLED_RUN_FAILED_WITHIN)
        deployed.figures["SIGKILL -> run marked failed (s)"] = time.monotonic() - killed
        [retry] = wait_for("the killed run is retried",
                           lambda: deployed.retries_of(held.run_id), 120)
        deployed.wait_idle()
    finally:
        shutil.copy(SNAPSHOT_DIR / BROKEN_SOURCE / "gpu_price.html",
                    deployed.snapshots / BROKEN_SOURCE / "gpu_price.html")
    return Overlap(deployed.run(held.run_id), deployed.run(next_tick.run_id),
                   deployed.run(retry.run_id), statuses, restarted_at, stale_before or [],
                   before, missed)


def test_a_tick_while_a_run_runs_queues_its_run(overlap):
    assert overlap.statuses_while_held == (dg.DagsterRunStatus.STARTED,
                                           dg.DagsterRunStatus.QUEUED)


def test_a_killed_run_worker_fails_its_run_and_the_runs_after_it_land(deployed, overlap):
    """SIGKILL mid-step: the run is marked failed, the queue moves on to the next tick's run and
    the retry, and both land everything (the lock the dead worker held is free)."""
    assert overlap.held.status == dg.DagsterRunStatus.FAILURE
    for run in (overlap.next_tick, overlap.retry):
        assert deployed.succeeded(run.run_id)
    landed = dict(published(deployed, "select run_id, count(*) from raw.crawls where passed "
                                      "and normalized_at is not null group by 1"))
    for run in (overlap.next_tick, overlap.retry):
        assert landed.get(run.run_id, 0) > 10, landed
    # nothing half-loaded: no passing crawl of any run (the killed one's included) is pending
    assert published(deployed, "select count(*) from raw.crawls where passed "
                               "and normalized_at is null") == [(0,)]


def test_the_daemon_killed_mid_run_ticks_on_without_duplicate_runs(deployed, overlap):
    # the held run lived on in the code server while the daemon was dead
    assert overlap.statuses_while_held[0] == dg.DagsterRunStatus.STARTED
    assert overlap.next_tick.run_id not in overlap.before
    assert tick_time(overlap.next_tick) > overlap.daemon_restarted_at   # ticked after the restart
    ticks = [r.tags[SCHEDULED_EXECUTION_TIME_TAG] for r in deployed.scheduled_runs()]
    assert len(ticks) == len(set(ticks)), sorted(ticks)   # one run per tick, restarts or not
    assert len(ticks) == len(overlap.before) + 2 + len(overlap.missed)


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


def test_a_source_failing_beyond_the_freshness_window_is_stale_and_alerts(deployed, overlap):
    """The source broke after its last good crawl in the first tick's run, more than
    GPUPRICES_FRESHNESS_HOURS before the runs after the overlap: they name it stale (beside
    the sources never crawled, a token-only source without its key), and the failed-source
    sensor tells people, once for the same failure; the runs still succeed (both warnings)."""
    assert BROKEN_SOURCE not in overlap.stale_before
    for run in (overlap.next_tick, overlap.retry):
        assert deployed.succeeded(run.run_id)
        assert stale_sources(deployed, run.run_id) == sorted(
            [*overlap.stale_before, BROKEN_SOURCE])
    notices = wait_for("the failed-source notice arrives", lambda: [
        p["json"] for p in deployed.receiver.posts
        if FAILED_SOURCES_TITLE in p["json"].get("title", "")], 90)
    assert all(BROKEN_SOURCE in n["message"] for n in notices)
    # the same failure, reported by the sensor after each run, reaches people once
    assert len({(n["title"], n["message"]) for n in notices}) == len(notices), notices
