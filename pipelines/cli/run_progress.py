"""The live view of `gpuprices run`: a spinner naming the running step, a bar over the run's
steps and, while the crawl step runs, how many sources have finished."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from pipelines.cli.output import console
from spiders.layout import crawl_verdicts_dir


class StepProgress:
    """A live view of an in-process run: a spinner naming the running step, a bar over the run's
    steps and, while the crawl step runs, how many sources have finished.

    It listens to the run's events through `DagsterInstance.add_event_listener`: the in-process
    executor calls it from the run's own thread for every event the run stores. Display is a
    nicety: any error in it is swallowed, and the run goes on whatever the terminal is.
    """

    def __init__(self, instance, run_id: str, sources: int, data_dir: Path) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self.instance, self.run_id, self.sources = instance, run_id, sources
        # each crawl writes its monitor verdict here when it ends; crawl ids end in the run id's
        # first 8 characters (pipelines/defs/ingest.py)
        self.verdicts = crawl_verdicts_dir(data_dir)
        self.running: dict[str, float] = {}
        self.finished = 0
        # a step that materializes several assets (every SQL model, every feed): how many it
        # has, and how many are done, so a long model rebuild shows how far it is
        self.assets_of_step: dict[str, int] = {}
        self.assets_done: dict[str, int] = {}
        # Dagster captures each step's stdout into its compute logs by redirecting file
        # descriptor 1 while the step runs; the display writes to a duplicate of the terminal's
        # descriptor, which the redirection does not touch.
        self._terminal = None
        display = console
        if console.is_terminal:
            self._terminal = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
            display = Console(file=self._terminal, force_terminal=True, width=console.width,
                              highlight=False)
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(), console=display,
                                 transient=True)
        self.task = self.progress.add_task("starting the run", total=None)
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll, daemon=True, name="gpuprices-progress")

    def __enter__(self) -> StepProgress:
        if self._terminal is None:  # piped or captured: the summary alone, as before
            return self
        # an instance without listeners: the spinner alone still runs
        with contextlib.suppress(Exception):
            self.instance.add_event_listener(self.run_id, self)
        self.progress.start()
        self._poller.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._poller.is_alive():
            self._poller.join(timeout=5)
        self.progress.stop()
        if self._terminal is not None:
            self._terminal.close()

    def __call__(self, entry) -> None:
        with contextlib.suppress(Exception):
            self._on_event(entry)

    def _on_event(self, entry) -> None:
        event = entry.dagster_event
        if event is None:
            return
        kind = event.event_type_value
        if kind == "PIPELINE_START":
            run = self.instance.get_run_by_id(self.run_id)
            plan = self.instance.get_execution_plan_snapshot(run.execution_plan_snapshot_id)
            self.progress.update(self.task, total=len(plan.steps))
            # a run that selects some of a step's assets plans its other outputs without a key
            self.assets_of_step = {step.key: sum(1 for o in step.outputs
                                                 if o.properties and o.properties.asset_key)
                                   for step in plan.steps}
        elif kind == "ASSET_MATERIALIZATION" and event.step_key:
            self.assets_done[event.step_key] = self.assets_done.get(event.step_key, 0) + 1
        elif kind == "STEP_START":
            self.running[event.step_key] = entry.timestamp
        elif kind in ("STEP_SUCCESS", "STEP_FAILURE", "STEP_SKIPPED"):
            started = self.running.pop(event.step_key, entry.timestamp)
            self.finished += 1
            self.progress.update(self.task, completed=self.finished)
            if self._terminal is not None:  # a log of finished steps above the bar
                mark = {"STEP_SUCCESS": "[green]✓[/]", "STEP_FAILURE": "[red]✗[/]",
                        "STEP_SKIPPED": "[yellow]-[/]"}[kind]
                self.progress.console.print(f"  {mark} {step_name(event.step_key)} "
                                            f"[dim]{entry.timestamp - started:.1f} s[/]")
        self._describe()

    def _describe(self) -> None:
        crawling = [key for key in self.running if key == "raw_offers" or key.startswith("raw__")]
        steps = [self._label(key) for key in self.running if key not in crawling]
        if crawling:  # one crawl step in process; one per source under the multiprocess executor
            done = len(list(self.verdicts.glob(f"*/*-{self.run_id[:8]}.json")))
            steps.insert(0, f"crawling: {done}/{self.sources} sources done")
        text = ", ".join(steps) if steps else ("…" if self.finished else "starting the run")
        self.progress.update(self.task, description=escape(text))

    def _label(self, step_key: str) -> str:
        """The step's name; for a step of several assets, how many it has materialized."""
        total = self.assets_of_step.get(step_key, 0)
        if total > 1:
            return f"{step_name(step_key)} {self.assets_done.get(step_key, 0)}/{total}"
        return step_name(step_key)

    def _poll(self) -> None:
        while not self._stop.wait(0.5):
            with contextlib.suppress(Exception):
                self._describe()


def step_name(step_key: str) -> str:
    """Dagster step keys join an asset key's parts with "__": marts__latest_prices."""
    return step_key.replace("__", "/")
