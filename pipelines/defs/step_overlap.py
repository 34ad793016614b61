"""The in-process executor of `gpuprices run` and of a launched in-process run: Dagster's own
in-process plan loop, except that the steps tagged OVERLAP_TAG (pipelines/defs/execution.py: the
price index, the advisor, the alerts, the feeds and the report) run side by side on threads once
the models are built, each on its own DuckDB connection.

Those steps read the models and write only their own tables or files, and the asset graph orders
the ones that read another's (the feeds after the index, the alerts after the advisor, the report
after both): on one core they ran one after another while the second idled, and DuckDB and numpy
release the GIL for most of their work. Every other step (the crawl, normalizing, the checks, the
models, the publish) runs alone, as before: it starts when nothing else runs, and nothing starts
beside it. So the publish, the lowest-priority step, still waits for every step ready before it
and copies a database no step is writing (its checkpoint needs no other transaction open).

Events are still handled by the plan's own bookkeeping on this thread, one at a time, in the
order the steps made them; a failed step skips what depends on it, as in Dagster's loop. Each
step's events are stored as it makes them (the event log's storage serializes its writes)."""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field

import dagster as dg
import dagster._check as check
from dagster._core.events import DagsterEvent, EngineEventData
from dagster._core.execution.api import ExecuteRunWithPlanIterable
from dagster._core.execution.compute_logs import create_compute_log_file_key
from dagster._core.execution.context.system import PlanExecutionContext, PlanOrchestrationContext
from dagster._core.execution.context_creation_job import PlanExecutionContextManager
from dagster._core.execution.plan.execute_plan import (
    _handle_compute_log_setup_error,
    _handle_compute_log_teardown_error,
    _trigger_hook,
    dagster_event_sequence_for_step,
)
from dagster._core.execution.plan.instance_concurrency_context import InstanceConcurrencyContext
from dagster._core.execution.plan.plan import ExecutionPlan
from dagster._core.execution.plan.step import ExecutionStep
from dagster._core.execution.retries import RetryMode
from dagster._core.executor.base import Executor

from pipelines.defs.execution import OVERLAP_TAG

PRIORITY_TAG = "dagster/priority"
_DONE = object()


@dataclass
class _Raised:
    """What a step's thread raised outside the step's own error handling (a Dagster error)."""
    error: BaseException


def overlaps(step: ExecutionStep) -> bool:
    """Whether a step may run beside other such steps (its op carries OVERLAP_TAG)."""
    return step.tags.get(OVERLAP_TAG) == "true"


def _priority(step: ExecutionStep) -> int:
    try:
        return int(step.tags.get(PRIORITY_TAG, 0))
    except ValueError:
        return 0


def launchable(waiting: list[ExecutionStep], running: list[ExecutionStep]) -> list[ExecutionStep]:
    """Which waiting steps start now, highest priority first: the overlapping ones while only such
    steps run; a step that must run alone once nothing runs (and the steps after it wait)."""
    if any(not overlaps(step) for step in running):
        return []
    chosen: list[ExecutionStep] = []
    for step in sorted(waiting, key=_priority, reverse=True):
        if overlaps(step):
            chosen.append(step)
        elif not running and not chosen:
            return [step]
        else:
            break
    return chosen


@dataclass
class _Running:
    step: ExecutionStep
    context: object
    thread: threading.Thread
    events: list[DagsterEvent] = field(default_factory=list)


def _run_step(step_context, key: str, events: queue.Queue) -> None:
    try:
        for event in dagster_event_sequence_for_step(step_context):
            events.put((key, event))
    except BaseException as error:   # Dagster's own (user errors come back as failure events)
        events.put((key, _Raised(error)))
        return
    events.put((key, _DONE))


def overlapping_plan_iterator(job_context: PlanExecutionContext,
                              execution_plan: ExecutionPlan) -> Iterator[DagsterEvent]:
    """Dagster's inner_plan_execution_iterator, with the overlapping steps run on threads."""
    compute_log_manager = job_context.instance.compute_log_manager
    step_keys = [step.key for step in execution_plan.get_steps_to_execute_in_topo_order()]
    with (InstanceConcurrencyContext(job_context.instance, job_context.dagster_run) as claims,
          execution_plan.start(retry_mode=job_context.retry_mode,
                               instance_concurrency_context=claims,
                               step_dependency_config=job_context.step_dependency_config)
          as active,
          ExitStack() as capture_stack):
        try:
            log_key = compute_log_manager.build_log_key_for_run(job_context.run_id,
                                                                create_compute_log_file_key())
            log_context = capture_stack.enter_context(compute_log_manager.capture_logs(log_key))
            yield DagsterEvent.capture_logs(job_context, step_keys, log_key, log_context)
        except Exception:
            yield from _handle_compute_log_setup_error(job_context, sys.exc_info())
        events: queue.Queue = queue.Queue()
        running: dict[str, _Running] = {}
        waiting: list[ExecutionStep] = []
        try:
            while not active.is_complete or running:
                if not active.is_complete:
                    waiting += active.get_steps_to_execute()
                yield from active.concurrency_event_iterator(job_context)
                for step in launchable(waiting, [r.step for r in running.values()]):
                    waiting.remove(step)
                    step_context = job_context.for_step(step, active.get_known_state())
                    thread = threading.Thread(target=_run_step, name=f"step {step.key}",
                                              args=(step_context, step.key, events), daemon=True)
                    running[step.key] = _Running(step, step_context, thread)
                    thread.start()
                if not running:
                    active.sleep_til_ready()
                    continue
                key, item = events.get()
                if isinstance(item, _Raised):
                    raise item.error
                if item is not _DONE:
                    running[key].events.append(item)
                    yield item
                    active.handle_event(item)
                    continue
                done = running.pop(key)
                done.thread.join()
                active.verify_complete(job_context, key)
                for event in active.plan_events_iterator(job_context):
                    done.events.append(event)
                    yield event
                yield from _trigger_hook(done.context, done.events)
        finally:
            # an interrupted run lets the steps it started finish their transactions before the
            # run lock is released
            for still in running.values():
                still.thread.join()
        try:
            capture_stack.close()
        except Exception:
            yield from _handle_compute_log_teardown_error(job_context, sys.exc_info())


class OverlappingInProcessExecutor(Executor):
    """Every step in this process; the overlapping ones side by side (the module says which)."""

    @property
    def retries(self) -> RetryMode:
        return RetryMode.ENABLED

    def execute(self, plan_context: PlanOrchestrationContext,
                execution_plan: ExecutionPlan) -> Iterator[DagsterEvent]:
        check.inst_param(plan_context, "plan_context", PlanOrchestrationContext)
        keys = execution_plan.step_keys_to_execute
        yield DagsterEvent.engine_event(
            plan_context, f"Executing steps in process (pid: {os.getpid()}), the ones after the "
                          "models side by side",
            event_specific_data=EngineEventData.in_process(os.getpid(), keys))
        yield from ExecuteRunWithPlanIterable(
            execution_plan=plan_context.execution_plan,
            iterator=overlapping_plan_iterator,
            execution_context_manager=PlanExecutionContextManager(
                job=plan_context.job, retry_mode=plan_context.retry_mode,
                execution_plan=plan_context.execution_plan, run_config=plan_context.run_config,
                dagster_run=plan_context.dagster_run, instance=plan_context.instance,
                raise_on_error=plan_context.raise_on_error,
                output_capture=plan_context.output_capture,
                step_dependency_config=self.step_dependency_config))
        yield DagsterEvent.engine_event(
            plan_context, f"Finished steps in process (pid: {os.getpid()})",
            event_specific_data=EngineEventData.in_process(os.getpid(), keys))


@dg.executor(name="in_process")
def overlapping_in_process_executor(_init_context) -> OverlappingInProcessExecutor:
    return OverlappingInProcessExecutor()
