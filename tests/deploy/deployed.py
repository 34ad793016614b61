"""A running local topology as the deployment tests drive it: the webserver's GraphQL (start and
stop a schedule, launch a run through the queue), the instance in Postgres (runs, events, check
evaluations), and waiting with a deadline for what the daemon does."""

from __future__ import annotations

import json
import logging
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import dagster as dg
from dagster._core.storage.tags import SCHEDULED_EXECUTION_TIME_TAG

from pipelines.deploy.topology import LOCATION, LocalTopology

T = TypeVar("T")
SCHEDULE = "scrape_hourly_schedule"
JOB = "gpuprices_job"
REPOSITORY = "__repository__"      # the one repository of a Definitions-based location
EVERY_MINUTE = "* * * * *"
FINISHED = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE,
            dg.DagsterRunStatus.CANCELED}


def wait_for(what: str, probe: Callable[[], T], timeout: float, every: float = 0.5) -> T:
    """probe() until it returns something truthy; fails naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        time.sleep(every)


@dataclass
class Deployed:
    topology: LocalTopology
    data_dir: Path
    instance: dg.DagsterInstance
    figures: dict[str, float] = field(default_factory=dict)
    schedule_running: bool = False  # as this test last set it
    receiver: Any = None          # tests.helpers.receivers.Receiver: the alert channel
    snapshots: Path | None = None  # the snapshot directory the code server replays

    def graphql(self, query: str, variables: dict | None = None) -> dict[str, Any]:
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        request = urllib.request.Request(f"{self.topology.ui_url}/graphql", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            answer = json.loads(response.read())
        assert "errors" not in answer, answer
        return answer["data"]

    def set_schedule(self, running: bool) -> None:
        """Started (ticks from now on) or reset to its default, stopped."""
        mutation = "startSchedule" if running else "resetSchedule"
        data = self.graphql(
            f"mutation($s: ScheduleSelector!) {{ {mutation}(scheduleSelector: $s) {{"
            " __typename ... on ScheduleStateResult { scheduleState { status } }"
            " ... on PythonError { message } } }",
            {"s": {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY,
                   "scheduleName": SCHEDULE}})[mutation]
        assert data["__typename"] == "ScheduleStateResult", data
        assert data["scheduleState"]["status"] == ("RUNNING" if running else "STOPPED"), data
        self.schedule_running = running

    def launch(self, asset_keys: list[dg.AssetKey]) -> str:
        """A run of the job for these assets, submitted as the UI does: into the queue."""
        data = self.graphql(
            "mutation($p: ExecutionParams!) { launchRun(executionParams: $p) { __typename"
            " ... on LaunchRunSuccess { run { runId status } }"
            " ... on PythonError { message } ... on InvalidSubsetError { message } } }",
            {"p": {"selector": {"repositoryLocationName": LOCATION,
                                "repositoryName": REPOSITORY, "jobName": JOB,
                                "assetSelection": [{"path": k.path} for k in asset_keys]},
                   "mode": "default"}})["launchRun"]
        assert data["__typename"] == "LaunchRunSuccess", data
        return data["run"]["runId"]

    def scheduled_runs(self) -> list[dg.DagsterRun]:
        """Every run a tick of the schedule launched, oldest first; not the retries of those
        runs (run_retries), which carry the tags of the run they retry."""
        runs = self.instance.get_runs(dg.RunsFilter(job_name=JOB,
                                                    tags={"dagster/schedule_name": SCHEDULE}))
        return sorted((r for r in runs if "dagster/parent_run_id" not in r.tags), key=tick_time)

    def run(self, run_id: str) -> dg.DagsterRun:
        return self.instance.get_run_by_id(run_id)

    def new_scheduled_run(self, after: set[str], timeout: float = 150,
                          ticked_after: datetime | None = None) -> dg.DagsterRun:
        """The next run the schedule launches that is not in `after` (and whose tick is later
        than `ticked_after`, when given)."""
        return wait_for("a schedule tick launches a run", lambda: next(
            (r for r in self.scheduled_runs() if r.run_id not in after
             and (ticked_after is None or tick_time(r) > ticked_after)), None), timeout)

    def wait_status(self, run_id: str, statuses: set[dg.DagsterRunStatus],
                    timeout: float = 420, every: float = 0.5,
                    meanwhile: Callable[[], None] = lambda: None) -> dg.DagsterRun:
        """The run once its status is one of `statuses`; `meanwhile()` at each look before."""
        def reached() -> dg.DagsterRun | None:
            run = self.run(run_id)
            if run.status in statuses:
                return run
            meanwhile()
            return None
        return wait_for(f"run {run_id} reaches {sorted(s.value for s in statuses)}", reached,
                        timeout, every)

    def wait_finished(self, run_id: str, timeout: float = 420, every: float = 0.5,
                      meanwhile: Callable[[], None] = lambda: None) -> dg.DagsterRun:
        return self.wait_status(run_id, FINISHED, timeout, every, meanwhile)

    def succeeded(self, run_id: str, timeout: float = 420) -> bool:
        """Waits for the run to finish; a failed run's assertion tells why (its steps' errors)."""
        run = self.wait_finished(run_id, timeout)
        assert run.status == dg.DagsterRunStatus.SUCCESS, (run_id, run.status,
                                                           self.failure_story(run_id))
        return True

    def failure_story(self, run_id: str) -> list[str]:
        """What the run's failures said: step failures, the run's failure, engine errors."""
        story = []
        for record in self.instance.get_records_for_run(run_id, limit=100_000).records:
            entry = record.event_log_entry
            event = entry.dagster_event
            if event is None:
                continue
            if event.is_step_failure:
                error = event.step_failure_data.error
                story.append(f"{event.step_key}: {error.message if error else entry.message}")
            elif event.event_type == dg.DagsterEventType.RUN_FAILURE or (
                    event.event_type == dg.DagsterEventType.ENGINE_EVENT
                    and entry.level >= logging.ERROR):
                story.append(entry.message or "")
        return story[-10:]

    def wait_idle(self, timeout: float = 600) -> None:
        """No run queued or in progress (a retry included): the next test starts from rest."""
        busy = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED,
                dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED,
                dg.DagsterRunStatus.CANCELING]
        wait_for("every run finishes", lambda: not self.instance.get_runs(
            dg.RunsFilter(statuses=busy)), timeout, every=1)

    def events(self, run_id: str, kind: dg.DagsterEventType) -> list:
        return self.instance.get_records_for_run(run_id=run_id, of_type=kind).records

    def worker_pid(self, run_id: str) -> int:
        """The run worker's pid, as the in-process executor reports it ("Executing steps in
        process (pid: N)")."""
        def reported() -> int | None:
            for record in self.events(run_id, dg.DagsterEventType.ENGINE_EVENT):
                message = record.event_log_entry.message or ""
                if message.startswith("Executing steps in process (pid: "):
                    return int(message.split("pid: ")[1].split(")")[0])
            return None
        return wait_for(f"run {run_id} reports its worker's pid", reported, 120)

    def retries_of(self, run_id: str) -> list[dg.DagsterRun]:
        return self.instance.get_runs(dg.RunsFilter(tags={"dagster/parent_run_id": run_id}))


def tick_time(run: dg.DagsterRun) -> datetime:
    return datetime.fromisoformat(run.tags[SCHEDULED_EXECUTION_TIME_TAG])
