"""The real-history database `make truth-real` scores: the default run (`gpuprices run`, the
bundled snapshots replayed) with the public price record loaded (data/records/: the daily
multi-provider tracker, the curated archives, Google Cloud's pricing file, ...), built in a work
directory of its own (never the user's data directory) and reused while neither the record nor
the code changed.

The key is the sha256 of the record's manifest (every version's sha256 is in it) and the code
version: the git tree of what builds the database (pipelines/, spiders/, dbt_like_sql/, the
snapshots) plus any uncommitted change to it. No git: no key, so every run builds afresh."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from pipelines.backfill.record import MANIFEST, RECORD_DIR
from spiders.layout import REPO_ROOT, db_path, truth_dir

# What the database is built from: a change under any of these is a new code version.
CODE_PATHS = ("pipelines", "spiders", "dbt_like_sql", "data/snapshots")
KEY_FILE = "real-db-key.json"


def real_work_dir(root: Path | None = None) -> Path:
    """Where the real-history database is built: <data dir>/truth/real (or under `root`)."""
    return (root if root is not None else truth_dir()) / "real"


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                          check=True).stdout


def code_version() -> str | None:
    """The tree of CODE_PATHS at HEAD and the hash of their uncommitted diff; None without git
    (an unpacked copy): the database is then always rebuilt."""
    try:
        trees = [_git("rev-parse", f"HEAD:{path}").strip() for path in CODE_PATHS]
        diff = _git("diff", "HEAD", "--", *CODE_PATHS)
    except (OSError, subprocess.CalledProcessError):
        return None
    return hashlib.sha256("\n".join([*trees, diff]).encode()).hexdigest()


def database_key(record_dir: Path = RECORD_DIR, code: str | None = None) -> dict | None:
    """What the built database depends on: the manifest's sha256 and the code version."""
    code = code if code is not None else code_version()
    if code is None:
        return None
    manifest = hashlib.sha256((record_dir / MANIFEST).read_bytes()).hexdigest()
    return {"record_manifest_sha256": manifest, "code_version": code}


def reusable(work: Path, key: dict | None) -> bool:
    """Whether `work` holds a published database built under `key`."""
    stored = work / KEY_FILE
    if key is None or not stored.exists() or not db_path(work).exists():
        return False
    try:
        return json.loads(stored.read_text(encoding="utf-8")) == key
    except ValueError:
        return False


def default_run(work: Path) -> None:
    """`gpuprices run` with the public record, its data directory and Dagster home in `work`."""
    env = {**os.environ, "GPUPRICES_DATA_DIR": str(work),
           "DAGSTER_HOME": str(work / "dagster_home")}
    env.pop("GPUPRICES_RECORD", None)        # the record is the point: never left out here
    env.pop("GPUPRICES_OPT_IN", None)        # the default run: no opted-in source
    result = subprocess.run([sys.executable, "-m", "pipelines.cli", "run"], cwd=REPO_ROOT,
                            env=env)
    # 4: some sources failed, the others landed; the database is published all the same
    if result.returncode not in (0, 4) or not db_path(work).exists():
        raise RuntimeError(f"gpuprices run in {work} exited {result.returncode}; "
                           "no database to score")


def real_database(work: Path | None = None, rebuild: bool = False,
                  build: Callable[[Path], None] = default_run,
                  say: Callable[[str], None] = print) -> tuple[Path, bool]:
    """The published prices.db of the real histories and whether it was reused: the one in
    `work` when its key matches (and not `rebuild`), else a fresh default run there."""
    work = work or real_work_dir()
    key = database_key()
    if not rebuild and reusable(work, key):
        say(f"real histories: reusing {db_path(work)} (record and code unchanged)")
        return db_path(work), True
    if work.exists() and any(work.iterdir()) and not (work / KEY_FILE).exists() \
            and not db_path(work).exists():
        raise RuntimeError(f"{work} holds files but no real-history database: not removing it")
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    say(f"real histories: building {db_path(work)} (gpuprices run with the public record) ...")
    build(work)
    if key is not None:
        (work / KEY_FILE).write_text(json.dumps(key, indent=2), encoding="utf-8")
    return db_path(work), False
