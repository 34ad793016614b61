"""The in-process executor that runs the steps after the models side by side
(pipelines/defs/step_overlap.py): which steps start together, and a small job run under it the
way `gpuprices run` runs the real one (pipelines/cli/run.py execute_in_this_process)."""

from __future__ import annotations

import threading
import uuid
from types import SimpleNamespace

import dagster as dg
import pytest

from pipelines.cli.run import execute_in_this_process
from pipelines.defs.execution import OVERLAP_TAG, OVERLAP_TAGS
from pipelines.defs.step_overlap import launchable, overlapping_in_process_executor


def step(key: str, overlap: bool = False, priority: int | None = None) -> SimpleNamespace:
    tags = {OVERLAP_TAG: "true"} if overlap else {}
    if priority is not None:
        tags["dagster/priority"] = str(priority)
    return SimpleNamespace(key=key, tags=tags)


INDEX, ADVICE, FEEDS = step("index", True), step("advice", True), step("feeds", True)
MODELS, PUBLISH = step("models"), step("publish", priority=-10)


@pytest.mark.parametrize(("waiting", "running", "starts"), [
    ([INDEX, ADVICE], [], ["index", "advice"]),          # the steps after the models together
    ([FEEDS], [INDEX], ["feeds"]),                       # beside the overlapping ones running
    ([MODELS], [], ["models"]),                          # a step that runs alone, alone
    ([MODELS], [INDEX], []),                             # ...once nothing else runs
    ([INDEX], [MODELS], []),                             # and nothing starts beside it
    ([PUBLISH], [FEEDS], []),                            # the publish waits for the others
    ([PUBLISH, ADVICE], [], ["advice"]),                 # and goes after the ones ready with it
    ([MODELS, PUBLISH], [], ["models"]),                 # one alone at a time, highest first
    ([], [], []),
])
def test_which_waiting_steps_start(waiting, running, starts):
    assert [s.key for s in launchable(waiting, running)] == starts


def overlap_job(fail_left: bool) -> tuple[dg.JobDefinition, list[str]]:
    """left and right overlap and meet at a barrier (which only two steps running at once pass);
    after_left needs left; last, a step that runs alone, needs both."""
    met = threading.Barrier(2, timeout=20)
    order: list[str] = []

    @dg.asset(op_tags=OVERLAP_TAGS)
    def left() -> None:
        met.wait()
        order.append("left")
        if fail_left:
            raise ValueError("left failed")

    @dg.asset(op_tags=OVERLAP_TAGS)
    def right() -> None:
        met.wait()
        order.append("right")

    @dg.asset(deps=[left], op_tags=OVERLAP_TAGS)
    def after_left() -> None:
        order.append("after_left")

    @dg.asset(deps=[right, after_left])
    def last() -> None:
        order.append("last")

    defs = dg.Definitions(assets=[left, right, after_left, last],
                          executor=overlapping_in_process_executor)
    return defs.resolve_implicit_global_asset_job_def(), order


def test_overlapping_steps_run_together_and_the_rest_after_them():
    job, order = overlap_job(fail_left=False)
    with dg.DagsterInstance.ephemeral() as instance:
        result = execute_in_this_process(job, instance, str(uuid.uuid4()), None)
    assert result.success
    assert sorted(order[:2]) == ["left", "right"]    # both reached the barrier together
    assert order[2:] == ["after_left", "last"]


def test_a_failed_step_stops_only_what_needs_it():
    job, order = overlap_job(fail_left=True)
    with dg.DagsterInstance.ephemeral() as instance:
        result = execute_in_this_process(job, instance, str(uuid.uuid4()), None)
    assert not result.success
    assert sorted(order) == ["left", "right"]          # right finished beside the failure
    failed = {e.step_key for e in result.all_events if e.is_step_failure}
    succeeded = {e.step_key for e in result.all_events if e.is_step_success}
    assert failed == {"left"}
    assert succeeded == {"right"}    # what needs left never starts, as under Dagster's own loop
