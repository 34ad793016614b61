"""One run per data directory: the lock waits a bounded time, names its holder, survives nothing
(a SIGKILLed holder releases it), and the jobs' executors hold it for a whole run, their step
processes included."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import dagster as dg
import pytest

from pipelines import run_lock
from pipelines.defs.run_lock_executor import run_locked
from spiders.layout import REPO_ROOT

HOLDER = """
import sys
from pipelines import run_lock
run_lock.acquire(sys.argv[1], "the test's holder", 0)
print("held", flush=True)
sys.stdin.readline()               # hold until the test says so (or kills this process)
"""


class Holder:
    """Another process holding the data directory's lock until released or killed."""

    def __init__(self, data_dir: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(data_dir)], cwd=REPO_ROOT,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline() == "held\n"

    def release(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.kill()


@pytest.fixture
def holder(tmp_path):
    held = Holder(tmp_path / "data")
    yield held
    held.stop()


def test_a_second_run_that_does_not_wait_is_refused_naming_the_holder(tmp_path, holder):
    announced = []
    with pytest.raises(run_lock.RunLockBusy) as busy:
        run_lock.acquire(tmp_path / "data", "me", 0, on_wait=announced.append)
    assert f"pid {holder.proc.pid}, the test's holder, started " in busy.value.holder
    assert announced == [busy.value.holder]
    assert "GPUPRICES_LOCK_WAIT" in str(busy.value)


def test_a_second_run_waits_and_goes_on_when_the_first_ends(tmp_path, holder):
    waiting, acquired = threading.Event(), threading.Event()

    def second_run():
        run_lock.acquire(tmp_path / "data", "second", 120, on_wait=lambda _: waiting.set())
        acquired.set()

    thread = threading.Thread(target=second_run, daemon=True)
    thread.start()
    assert waiting.wait(30)
    assert not acquired.is_set()
    holder.release()
    assert acquired.wait(60)
    assert run_lock.held_by_this_process(tmp_path / "data")
    assert "second" in run_lock.holder(tmp_path / "data")
    run_lock.release(tmp_path / "data")
    assert not run_lock.held_by_this_process(tmp_path / "data")


def test_a_waiter_that_looks_before_the_holder_has_written_waits_for_its_name(tmp_path):
    """The CI race of stop 19: the waiter read the lock file in the moment between the holder
    taking the lock and writing who it is, and said 'has not said who it is yet'."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    run_lock.lock_path(data_dir).write_text("")
    announce = run_lock._announcer("the late holder")

    def write_late():
        time.sleep(0.3)
        fd = os.open(run_lock.lock_path(data_dir), os.O_RDWR)
        try:
            announce(fd)
        finally:
            os.close(fd)

    thread = threading.Thread(target=write_late, daemon=True)
    thread.start()
    assert f"pid {os.getpid()}, the late holder, started " in run_lock.holder(data_dir)
    thread.join(30)


def test_a_holder_that_never_says_who_it_is_is_reported_as_unknown_after_a_bounded_look(tmp_path):
    run_lock.lock_path(tmp_path).write_text("{\"pid\": 1")      # cut short
    assert run_lock.holder(tmp_path, settle_seconds=0.2) == (
        "a process that has not said who it is yet")


def test_a_new_holder_overwrites_a_longer_announcement_with_valid_text(tmp_path):
    path = run_lock.lock_path(tmp_path)
    path.write_text('{"pid": 1, "by": "' + "x" * 500 + '", "started_at": "then"}')
    fd = os.open(path, os.O_RDWR)
    try:
        run_lock._announcer("short")(fd)
    finally:
        os.close(fd)
    assert json.loads(path.read_text())["by"] == "short"


def test_the_wait_is_bounded(tmp_path, holder):
    started = time.monotonic()
    with pytest.raises(run_lock.RunLockBusy):
        run_lock.acquire(tmp_path / "data", "me", 0.5)
    assert time.monotonic() - started < 30     # bounded; not a timing assert on the wait itself


def test_a_sigkilled_holder_leaves_no_stale_lock(tmp_path, holder):
    holder.kill()
    run_lock.acquire(tmp_path / "data", "next run", 0)
    run_lock.release(tmp_path / "data")


def test_the_lock_is_reentrant_within_a_process(tmp_path):
    with run_lock.run_lock(tmp_path, "cli", 0):
        with run_lock.run_lock(tmp_path, "the executor, in the CLI's process", 0):
            assert run_lock.held_by_this_process(tmp_path)
        assert run_lock.held_by_this_process(tmp_path)    # the outer hold is kept
    assert not run_lock.held_by_this_process(tmp_path)


@pytest.mark.parametrize("text, seconds", [("", 1800.0), ("0", 0.0), ("2.5", 2.5),
                                           (" 10 ", 10.0)])
def test_wait_seconds_from_the_environment(monkeypatch, text, seconds):
    monkeypatch.setenv("GPUPRICES_LOCK_WAIT", text)
    assert run_lock.wait_seconds_from_env() == seconds


def test_a_launched_run_has_its_own_default_and_the_environment_still_decides(monkeypatch):
    monkeypatch.delenv("GPUPRICES_LOCK_WAIT", raising=False)
    assert run_lock.wait_seconds_from_env(run_lock.LAUNCHED_WAIT_SECONDS) == 3000.0
    monkeypatch.setenv("GPUPRICES_LOCK_WAIT", "7")
    assert run_lock.wait_seconds_from_env(run_lock.LAUNCHED_WAIT_SECONDS) == 7.0


def test_the_default_wait_is_longer_than_the_slowest_run_can_be():
    """Issue 30: the wait (once 60 s) was shorter than a normal run here (40-90 s), so an
    overlapping hourly run exited 5. The slowest crawl: the shared process's limit and grace,
    then a retry alone; the rest of a run takes minutes at most."""
    from pipelines.resources import CrawlerResource

    fields = CrawlerResource.model_fields
    slowest_crawl = (fields["timeout_seconds"].default + fields["shared_grace_seconds"].default
                     + fields["timeout_seconds"].default)
    assert slowest_crawl + 5 * 60 <= run_lock.DEFAULT_WAIT_SECONDS


def test_a_scheduled_run_waits_as_long_as_the_daemon_lets_a_run_live():
    import yaml

    from spiders.layout import REPO_ROOT

    config = yaml.safe_load((REPO_ROOT / "dagster.yaml").read_text(encoding="utf-8"))
    assert config["run_monitoring"]["max_runtime_seconds"] == run_lock.LAUNCHED_WAIT_SECONDS


@pytest.mark.parametrize("text", ["-1", "soon", "inf", "nan"])
def test_a_wrong_wait_is_refused(monkeypatch, text):
    monkeypatch.setenv("GPUPRICES_LOCK_WAIT", text)
    with pytest.raises(ValueError, match="GPUPRICES_LOCK_WAIT"):
        run_lock.wait_seconds_from_env()


# --- the jobs' executors: a launched run holds the lock, its step processes inside the hold ------

@dg.op
def lock_is_held_elsewhere_or_here() -> str:
    """Who holds the lock, as a step sees it: another process (the run's orchestrator, for a step
    in its own process), or this process (in process)."""
    from spiders.layout import data_dir

    if run_lock.held_by_this_process(data_dir()):
        return "this process"
    try:
        run_lock.acquire(data_dir(), "a step", 0)
    except run_lock.RunLockBusy as busy:
        return busy.holder
    run_lock.release(data_dir())
    return "nobody"


@dg.job(executor_def=run_locked(dg.in_process_executor))
def in_process_job():
    lock_is_held_elsewhere_or_here()


@dg.job(executor_def=run_locked(dg.multiprocess_executor))
def multiprocess_job():
    lock_is_held_elsewhere_or_here()


def _launched(job_name: str, data_dir: Path, monkeypatch) -> tuple[bool, str | None, list]:
    """The job run as the daemon's run worker runs it (its own executor, not in process): whether
    it succeeded, what its step saw, the errors of its events."""
    monkeypatch.setenv("GPUPRICES_DATA_DIR", str(data_dir))
    monkeypatch.setenv("GPUPRICES_LOCK_WAIT", "0")
    job = dg.reconstructable(globals()[job_name])
    with dg.instance_for_test() as instance, dg.execute_job(job, instance,
                                                             raise_on_error=False) as result:
        seen = (result.output_for_node("lock_is_held_elsewhere_or_here")
                if result.success else None)
        errors = [error.message for event in result.all_events
                  if (error := getattr(event.event_specific_data, "error", None))]
        return result.success, seen, errors


@pytest.mark.parametrize("job_name, seen_by_the_step", [
    ("in_process_job", "this process"),
    ("multiprocess_job", "Dagster run "),
])
def test_a_launched_run_holds_the_lock_for_its_steps(tmp_path, monkeypatch, job_name,
                                                     seen_by_the_step):
    success, seen, _ = _launched(job_name, tmp_path / "data", monkeypatch)
    assert success and seen_by_the_step in seen
    assert not run_lock.held_by_this_process(tmp_path / "data")      # released after the run


def test_a_launched_run_fails_when_another_run_holds_the_lock(tmp_path, monkeypatch, holder):
    success, _, errors = _launched("in_process_job", tmp_path / "data", monkeypatch)
    assert not success
    assert any(f"pid {holder.proc.pid}, the test's holder" in error for error in errors)


def test_the_project_jobs_hold_the_lock():
    from pipelines.definitions import defs

    for name in ("gpuprices_job", "report_job"):
        creation = defs.resolve_job_def(name).executor_def.executor_creation_fn
        assert creation.__qualname__.startswith("run_locked."), name


def test_reject_waits_for_a_running_run_like_run_does(tmp_path, holder):
    import os

    data_dir = tmp_path / "data"
    env = {**os.environ, "GPUPRICES_DATA_DIR": str(data_dir), "GPUPRICES_LOCK_WAIT": "0",
           "DAGSTER_HOME": str(tmp_path / "dagster_home")}
    proc = subprocess.run([sys.executable, "-m", "pipelines.cli", "reject", "some-crawl",
                           "--reason", "test"], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 5, proc.stdout + proc.stderr          # EXIT_LOCKED: nothing done
    assert "the test's holder" in proc.stdout + proc.stderr
    assert not (data_dir / ".work" / "prices.db").exists()          # it never opened the DB
