"""One run per data directory at a time: an exclusive lock on `<data dir>/.run.lock`.

Two runs on one data directory interleave their writes to the working database (each asset opens
it, writes, closes), so one run could publish or mark what the other loaded. `gpuprices run`
holds this lock for the whole run; a job the Dagster daemon or `make ui` launches holds it in its
executor (pipelines/defs/run_lock_executor.py). The lock is flock(2) (the `filelock` library,
never its soft fallback): the kernel drops it when the holder exits, SIGKILL included, so a
crashed run never leaves a stale lock behind. The holder writes who it is into the file, so a
waiting run can say whom it waits for.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout

LOCK_FILE_NAME = ".run.lock"
WAIT_ENV = "GPUPRICES_LOCK_WAIT"
# How long a run waits for another one, by default: longer than the slowest run can be. A run's
# crawl is bounded by the crawler's per-source limit (pipelines/resources.py: 600 s, plus 60 s
# for the shared crawl process to close; a source crawled again alone after that process died
# gets another 600 s), and normalizing, the models, the feeds, the report and the alerts take
# a minute or two after it; runs here take 40-90 s. So 30 minutes (it once was 60 s, shorter
# than a normal run: an hourly run that overlapped a slow one exited 5 instead of waiting).
DEFAULT_WAIT_SECONDS = 1800.0
# A run the Dagster daemon launches (a schedule) waits as long as the daemon lets any run live
# (dagster.yaml, run_monitoring.max_runtime_seconds): a holder running longer is stuck and run
# monitoring ends it, so a scheduled run queues behind a slow one instead of failing.
LAUNCHED_WAIT_SECONDS = 3000.0
POLL_SECONDS = 0.2
# how long a waiting run gives a holder that has just taken the lock to write who it is
ANNOUNCE_SECONDS = 2.0

# The locks this process holds, by lock file: flock conflicts between two descriptors of one
# process too, so a step that runs inside the CLI's own process must not ask again.
_held: dict[str, FileLock] = {}


class RunLockBusy(Exception):
    """Another run held the data directory's lock for longer than this run would wait."""

    def __init__(self, lock_path: Path, holder: str, waited_seconds: float) -> None:
        self.lock_path, self.holder, self.waited_seconds = lock_path, holder, waited_seconds
        super().__init__(f"another run holds {lock_path} ({holder}); waited "
                         f"{waited_seconds:g} s ({WAIT_ENV} sets how long)")


def lock_path(data_dir: Path) -> Path:
    return Path(data_dir) / LOCK_FILE_NAME


def wait_seconds_from_env(default: float = DEFAULT_WAIT_SECONDS) -> float:
    """GPUPRICES_LOCK_WAIT: how many seconds a run waits for another to finish (0: not at all);
    unset, `default`."""
    text = os.environ.get(WAIT_ENV, "").strip()
    if not text:
        return default
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 <= seconds < float("inf"):
        raise ValueError(f"{WAIT_ENV} must be a number of seconds >= 0, not {text!r}")
    return seconds


def _announced(data_dir: Path) -> str | None:
    try:
        info = json.loads(lock_path(data_dir).read_text(encoding="utf-8"))
        return f"pid {int(info['pid'])}, {info['by']}, started {info['started_at']}"
    except (OSError, ValueError, KeyError, TypeError):
        return None


def holder(data_dir: Path, settle_seconds: float = ANNOUNCE_SECONDS) -> str:
    """Who holds (or last held) the lock, as the holder wrote it: 'pid 123, gpuprices run, started
    2026-11-30 09:00:05 UTC'. A holder that took the lock a moment ago may not have written yet
    (the file is created, then locked, then written), so this looks again for up to
    `settle_seconds` before saying it does not know."""
    end = time.monotonic() + settle_seconds
    while (said := _announced(data_dir)) is None and time.monotonic() < end:
        time.sleep(0.05)   # the holder writes within milliseconds of taking the lock
    return said or "a process that has not said who it is yet"


def _announcer(by: str) -> Callable[[int], None]:
    def write_holder(fd: int) -> None:
        started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        text = json.dumps({"pid": os.getpid(), "by": by, "started_at": started}).encode()
        # write over the old text first, then cut what is left of it: a reader never finds the
        # file empty between two holders, only (briefly) unparseable, which holder() waits out
        os.pwrite(fd, text, 0)
        os.ftruncate(fd, len(text))
    return write_holder


def held_by_this_process(data_dir: Path) -> bool:
    lock = _held.get(str(lock_path(data_dir).resolve()))
    return lock is not None and lock.is_locked


def acquire(data_dir: Path, by: str, wait_seconds: float,
            on_wait: Callable[[str], None] | None = None) -> FileLock:
    """Take the data directory's lock, waiting up to `wait_seconds` for another run (after calling
    `on_wait` with who holds it); raise RunLockBusy when it is still held. Release it with
    `release(data_dir)`, or let the process end."""
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    path = lock_path(data_dir).resolve()
    # fallback_to_soft=False: a soft lock (a marker file) would outlive a SIGKILLed holder;
    # thread_local=False: the process holds it, whichever thread (Dagster's or the CLI's) asks
    lock = FileLock(path, thread_local=False, fallback_to_soft=False,
                    on_acquired=_announcer(by), poll_interval=POLL_SECONDS)
    try:
        lock.acquire(blocking=False)
    except Timeout:
        if on_wait is not None:
            on_wait(holder(data_dir))
        try:
            lock.acquire(timeout=wait_seconds) if wait_seconds > 0 else lock.acquire(
                blocking=False)
        except Timeout:
            raise RunLockBusy(path, holder(data_dir), wait_seconds) from None
    _held[str(path)] = lock
    return lock


def release(data_dir: Path) -> None:
    lock = _held.pop(str(lock_path(data_dir).resolve()), None)
    if lock is not None:
        lock.release(force=True)


@contextmanager
def run_lock(data_dir: Path, by: str, wait_seconds: float,
             on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the data directory's lock for the block; a no-op when this process holds it already
    (a run the CLI started executes in the CLI's process)."""
    if held_by_this_process(data_dir):
        yield
        return
    acquire(data_dir, by, wait_seconds, on_wait)
    try:
        yield
    finally:
        release(data_dir)
