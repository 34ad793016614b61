"""The jobs' executors hold the data directory's run lock (pipelines/run_lock.py) for the whole
run, so a run the Dagster daemon or `make ui` launches and a `gpuprices run` never write the
working database at the same time.

The lock is taken where the run is orchestrated: the run worker process for a launched run, which
with GPUPRICES_EXECUTOR=multiprocess starts the step processes inside the hold (a lock per step
would let another run in between two steps). `gpuprices run` takes the lock itself before the
run starts and orchestrates in its own process, so there the executor finds it held and goes on.
A launched run (a schedule's, the UI's) waits for it up to GPUPRICES_LOCK_WAIT seconds, by
default as long as the daemon lets a run live (run_lock.LAUNCHED_WAIT_SECONDS, 50 minutes): it
queues behind a slow `gpuprices run` instead of failing. Past that it fails, saying who holds it.
"""

from collections.abc import Iterator

import dagster as dg
from dagster._core.executor.base import Executor

from pipelines.run_lock import LAUNCHED_WAIT_SECONDS, run_lock, wait_seconds_from_env
from spiders.layout import data_dir


class RunLockedExecutor(Executor):
    """`inner`, orchestrating its steps while this process holds the data directory's lock."""

    def __init__(self, inner: Executor) -> None:
        self._inner = inner

    def execute(self, plan_context, execution_plan) -> Iterator[dg.DagsterEvent]:
        with run_lock(data_dir(), f"Dagster run {plan_context.run_id}",
                      wait_seconds_from_env(LAUNCHED_WAIT_SECONDS)):
            yield from self._inner.execute(plan_context, execution_plan)

    @property
    def retries(self):
        return self._inner.retries

    @property
    def step_dependency_config(self):
        return self._inner.step_dependency_config


def run_locked(executor_def: dg.ExecutorDefinition) -> dg.ExecutorDefinition:
    """`executor_def` (same name and config) whose runs hold the data directory's lock."""
    create = executor_def.executor_creation_fn
    return dg.ExecutorDefinition(
        name=executor_def.name,
        config_schema=executor_def.config_schema,
        requirements=executor_def.get_requirements,
        executor_creation_fn=lambda init_context: RunLockedExecutor(create(init_context)),
        description=executor_def.description,
    )
