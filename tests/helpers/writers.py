"""Another process writing a DuckDB file, as a user's `duckdb` session or a second run would: one
that holds the file (and so DuckDB's lock) while a test runs, and one killed mid-session, which
leaves its write-ahead log behind."""

from __future__ import annotations

import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

READY = "ready"
# Opens the file for writing, runs the statements, says so, then waits for its stdin to close.
SESSION = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], config={"storage_compatibility_version": "v1.5.0"})
for statement in sys.argv[2:]:
    con.execute(statement)
print("ready", flush=True)
sys.stdin.read()
"""


def _session(path: Path, statements: tuple[str, ...]) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", SESSION, str(path), *statements],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60           # a hang guard: the session is ready in ~0.2 s
    while time.monotonic() < deadline:
        if select.select([proc.stdout], [], [], 0.2)[0]:
            line = proc.stdout.readline()
            if line.strip() == READY:
                return proc
            break                               # it ended (an error): stop waiting
        if proc.poll() is not None:
            break
    proc.kill()
    _, err = proc.communicate(timeout=30)
    raise AssertionError(f"the writing session did not start: {err}")


@contextmanager
def held_for_writing(path: Path, *statements: str) -> Iterator[subprocess.Popen]:
    """A process with `path` open for writing (after running `statements`) for the block."""
    proc = _session(path, statements)
    try:
        yield proc
    finally:
        proc.kill()
        proc.communicate(timeout=30)


def killed_while_writing(path: Path, *statements: str) -> None:
    """A session opens `path` for writing, commits `statements` and is SIGKILLed: what it
    committed stays in `<path>.wal`, never checkpointed."""
    proc = _session(path, statements)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
