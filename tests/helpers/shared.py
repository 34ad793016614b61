"""What a test session makes once for all its xdist workers: a run, a backfilled data directory.
The first process to ask makes it under a file lock in the session's common temp root; the others
wait for it and read the result it left. Tests only read what is made; one that writes works on
a copy."""

from __future__ import annotations

import fcntl
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def session_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's temp root, common to all its xdist workers (each has its own basetemp)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def made_once(root: Path, make: Callable[[Path], T]) -> T:
    """`make(root)`, called by whichever process asks first (the others wait on the lock), its
    result pickled beside it for them. A `make` that raises leaves no result: the next asker
    tries again, and fails the same way."""
    root.mkdir(parents=True, exist_ok=True)
    result = root / "made.pickle"
    with (root / "made.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)          # released when the file closes
        if not result.exists():
            made = pickle.dumps(make(root))
            partial = result.with_suffix(".partial")
            partial.write_bytes(made)
            partial.rename(result)
    return pickle.loads(result.read_bytes())
