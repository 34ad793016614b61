"""A file of a real archive's clone, for the tests that read one version of it: the clones live
under GPUPRICES_ARCHIVE_CLONES (default /work/.mirror) as <owner>+<name>/repo, bare or not; a
test whose clone, commit or blob is absent is skipped, saying which."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

CLONES = Path(os.environ.get("GPUPRICES_ARCHIVE_CLONES", "/work/.mirror"))


def clone_file(repository: str, commit: str, path: str) -> str:
    """The text of `path` at `commit` of `repository` (owner/name); skips when it is absent."""
    clone = CLONES / repository.replace("/", "+") / "repo"
    if not clone.exists():
        pytest.skip(f"no clone of {repository} at {clone} (set GPUPRICES_ARCHIVE_CLONES)")
    done = subprocess.run(["git", "-C", str(clone), "show", f"{commit}:{path}"],
                          capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"{repository} clone lacks {commit}:{path}: {done.stderr.decode().strip()}")
    return done.stdout.decode("utf-8-sig")
