"""Long-running processes of the local topology: each started in a process group of its own
(so that stopping it stops what it started: the code server's gRPC child and run workers, the
daemon's threads' subprocesses), its output in <name>.log and its pid in <name>.pid, so that
`python -m pipelines.deploy stop` from another shell finds it. A pid file is trusted only while
its process still runs the command it was written for (a reused pid is left alone)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

# How long a service gets to end after SIGTERM before SIGKILL: the three Dagster processes end
# within seconds on an idle machine; the rest is headroom for a loaded one (the stop is shared by
# all of them, stop_groups).
GRACE_SECONDS = 20.0

@dataclass(frozen=True)
class Service:
    """One process of the topology: its name (pid and log file names) and how it starts."""

    name: str
    command: tuple[str, ...]
    env: dict[str, str]
    cwd: Path


def pid_file(run_dir: Path, name: str) -> Path:
    return run_dir / f"{name}.pid"


def log_file(run_dir: Path, name: str) -> Path:
    return run_dir / f"{name}.log"


def default_signals() -> None:
    """In a child, before exec: SIGINT and SIGTERM at their default actions. A handler reverts
    across exec by itself, an ignored signal is inherited: a background job's SIGINT, and a
    process that ran Dagster in-process with SIGINT ignored ignores SIGTERM too
    (dagster._utils.interrupts gives it what SIGINT has). A service that ignores SIGTERM ends
    only when killed after the stop's grace."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)


def start(service: Service, run_dir: Path) -> subprocess.Popen:
    """Started with default signal actions (default_signals), whatever `up` inherited."""
    run_dir.mkdir(parents=True, exist_ok=True)
    with log_file(run_dir, service.name).open("ab") as log:
        proc = subprocess.Popen(list(service.command), cwd=service.cwd, env=service.env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                process_group=0, preexec_fn=default_signals)
    write_pid(run_dir, service.name, proc.pid, service.command[0])
    return proc


def write_pid(run_dir: Path, name: str, pid: int, marker: str) -> None:
    """`pid marker`: the marker is a word of the process's command line, checked before a
    signal is sent to the pid."""
    pid_file(run_dir, name).write_text(f"{pid} {Path(marker).name}\n", encoding="utf-8")


def recorded_pid(run_dir: Path, name: str) -> int | None:
    """The pid in <name>.pid while that process still runs its command, else None."""
    path = pid_file(run_dir, name)
    try:
        pid_text, marker = path.read_text(encoding="utf-8").split()
        cmdline = Path(f"/proc/{int(pid_text)}/cmdline").read_bytes()
    except (OSError, ValueError):
        return None
    return int(pid_text) if marker.encode() in cmdline else None


def alive(pid: int) -> bool:
    """Running, and not a zombie waiting for its parent."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return any(_pgid_of(pid) == pgid and alive(pid) for pid in _pids())


def _pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def _pgid_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[2])
    except (OSError, IndexError, ValueError):
        return None


def stop_groups(groups: dict[int, subprocess.Popen | None],
                grace_seconds: float = GRACE_SECONDS) -> list[int]:
    """SIGTERM to every group at once, then SIGKILL to what is left of them after one shared
    grace period: a stop takes as long as the slowest service, not as long as all of them in
    turn (three Dagster processes stopped one by one, each up to its grace, outlasted a 90 s
    bound on a loaded machine). `groups`: {pgid: our Popen of its leader, or None when another
    process started it}. Returns the groups that had to be killed."""
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
    running = set(groups)
    deadline = time.monotonic() + grace_seconds
    while running and time.monotonic() < deadline:
        for pgid in list(running):
            if groups[pgid] is not None:
                groups[pgid].poll()   # reap our child, else it stays a zombie in its own group
            if not group_alive(pgid):
                running.discard(pgid)
        if running:
            time.sleep(0.2)
    for pgid in running:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
    for proc in groups.values():
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
    # SIGKILL is delivered, not yet done: return once nothing of the groups runs any more
    deadline = time.monotonic() + 5
    while any(group_alive(pgid) for pgid in running) and time.monotonic() < deadline:
        time.sleep(0.05)
    return sorted(running)


def stop_group(pgid: int, grace_seconds: float = GRACE_SECONDS,
               proc: subprocess.Popen | None = None) -> bool:
    """One group (stop_groups); True when it had to be killed."""
    return bool(stop_groups({pgid: proc}, grace_seconds))


def children(pid: int) -> list[int]:
    """Every descendant of `pid` (the code server's gRPC child and its run workers)."""
    parents: dict[int, list[int]] = {}
    for child in _pids():
        try:
            ppid = int(Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        parents.setdefault(ppid, []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
