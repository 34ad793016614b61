"""Great Expectations in a process of its own, for `gpuprices run`.

Importing GX and making its context takes about 3 s of CPU, more than Dagster's import. In the
run's own process that time is on the run's path whatever thread does it: the crawl step's
warm-up thread and the steps share one interpreter lock, while the crawl itself runs in Scrapy
processes started before Dagster loads (pipelines/crawl_ahead.py). So `gpuprices run` forks this
worker first thing, before any thread exists: it imports GX on the other core while the run's
process loads Dagster and the crawl runs, then validates what the checks send it (the frame, the
suite as plain `suites.Expect` data, the result format) with the same function they would call
(gx_validate.validate_here) and answers with plain data.

Any other process (a Dagster daemon's run, the multiprocess executor's steps, tests) starts no
worker and validates in its own process as before. A worker that fails or dies is never a
check's verdict: the check validates in its own process instead, where an error is raised as it
would have been."""

from __future__ import annotations

import atexit
import multiprocessing
import os
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # imported by the worker, after the fork: the crawl starts sooner without them
    import pandas as pd

    from pipelines.quality.gx_validate import Validation
    from pipelines.quality.suites import Expect


@dataclass
class _Worker:
    process: BaseProcess
    connection: Connection
    lock: threading.Lock       # one request at a time: checks may run on threads side by side


_worker: _Worker | None = None
# How much lower the worker's CPU priority is than the run's (os.nice: 0-19, higher is lower).
WORKER_NICENESS = 10


def start() -> bool:
    """Fork the worker, which imports GX at once. Only while this process has one thread: a fork
    copies no other thread, and a lock another thread held would stay held in the child. Returns
    whether a worker runs."""
    global _worker
    if _worker is not None:
        return True
    if threading.active_count() > 1:
        return False
    context = multiprocessing.get_context("fork")
    ours, theirs = context.Pipe()
    process = context.Process(target=_serve, args=(theirs,), name="gx-worker", daemon=True)
    process.start()
    theirs.close()
    _worker = _Worker(process, ours, threading.Lock())
    # Ended as the process exits, however the command ends. Not left to multiprocessing's own
    # exit handler: it stops a daemonic child with SIGTERM and waits, which a process that ignores
    # SIGTERM (a child of one that does: the ignored set survives fork and exec) waits for forever.
    atexit.register(stop)
    return True


def running() -> bool:
    return _worker is not None


def _serve(connection: Connection) -> None:
    """The worker: GX first, then one validation per request until the run's process goes."""
    import gc
    import signal

    from pipelines.quality import gx_validate

    signal.signal(signal.SIGTERM, signal.SIG_DFL)   # stoppable even when the run ignores it
    gc.enable()   # the run disables it for its start-up; this process lives on its own
    # The run's own start-up and the crawl need the cores first: GX is wanted only once the
    # crawl has landed, and by then the run's process waits for this one's answers.
    os.nice(WORKER_NICENESS)
    gx_validate.warm_up()
    while True:
        try:
            request = connection.recv()
        except (EOFError, OSError):
            return
        try:
            answer = gx_validate.validate_here(*request)
        except Exception:   # the check validates in its own process and meets the error there
            answer = None
        connection.send(answer)


def validate(df: pd.DataFrame, suite_name: str, expectations: list[Expect],
             result_format: dict) -> Validation | None:
    """The worker's verdict, or None: no worker runs, or it failed or died (the caller validates
    in its own process)."""
    worker = _worker
    if worker is None:
        return None
    with worker.lock:
        try:
            worker.connection.send((df, suite_name, expectations, result_format))
            answer = worker.connection.recv()
        except (EOFError, OSError):
            stop()
            return None
    return answer


def stop() -> None:
    """End the worker (the run is over, or the worker broke)."""
    global _worker
    worker, _worker = _worker, None
    if worker is None:
        return
    worker.connection.close()
    worker.process.kill()
    worker.process.join(5)
