"""A backfill killed (SIGKILL) part-way, at any step (reading, loading a version, publishing a
chunk), resumes to exactly the tables an uninterrupted backfill leaves: no row lost, none
twice. Bounded: the killed process is given at most two minutes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta

import duckdb
import pytest

from pipelines.backfill.load import backfill
from pipelines.backfill.publish import publish_pending
from spiders.layout import REPO_ROOT, work_db_path
from tests.backfill.conftest import CATALOG_START

CHUNK = 150          # offers per published chunk: several chunks, so a kill can land in one
# the catalog's first 120 commits (164 versions, 460 offers): enough for three chunks and more
UNTIL = CATALOG_START + timedelta(hours=7 * 120)
RUNNER = """
import sys
from pipelines.backfill.load import backfill
from pipelines.backfill.publish import publish_pending
from datetime import datetime
root, repo, chunk, until = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
backfill("skypilot-catalog", repo, lambda: publish_pending(root), root=root, chunk_offers=chunk,
         until=datetime.fromisoformat(until),
         progress=lambda n, total, offers: print(n, flush=True))
print("done", flush=True)
"""
# what two equal backfills share (not when they ran)
TABLES = {
    "observations": "select * from observations",
    "quarantine": "select * exclude (quarantined_at) from quarantine",
    "raw.crawls": "select * exclude (run_id, normalized_at) from raw.crawls",
    "raw.offers": "select * from raw.offers",
}


def _tables(root) -> dict[str, list]:
    con = duckdb.connect(str(work_db_path(root)), read_only=True)
    try:
        return {name: sorted(con.execute(sql).fetchall(), key=repr)
                for name, sql in TABLES.items()}
    finally:
        con.close()


def _killed_at(root, repo, versions_done: int) -> bool:
    """Run a backfill in a process of its own and SIGKILL it once it has read `versions_done`
    versions; False if it finished first."""
    proc = subprocess.Popen([sys.executable, "-c", RUNNER, str(root), str(repo), str(CHUNK),
                             UNTIL.isoformat()],
                            stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT,
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    deadline = time.monotonic() + 120
    try:
        for line in proc.stdout:  # type: ignore[union-attr]
            if line.strip() == "done":
                return False
            if int(line) >= versions_done:
                os.kill(proc.pid, signal.SIGKILL)
                return True
            if time.monotonic() > deadline:
                pytest.fail("the backfill did not get that far in two minutes")
        return False
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, archives):
    root = tmp_path_factory.mktemp("whole")
    backfill("skypilot-catalog", archives["skypilot-catalog"], lambda: publish_pending(root),
             root=root, chunk_offers=CHUNK, until=UNTIL)
    return _tables(root)


def test_a_killed_backfill_resumes_to_the_same_tables(tmp_path, archives, uninterrupted):
    root = tmp_path / "killed"
    repo = archives["skypilot-catalog"]
    assert _killed_at(root, repo, 30)           # mid-way through the first chunks
    assert _killed_at(root, repo, 110)          # and again, later, after resuming
    stats = backfill("skypilot-catalog", repo, lambda: publish_pending(root), root=root,
                     chunk_offers=CHUNK, until=UNTIL)
    assert stats.already_read >= 110
    assert _tables(root) == uninterrupted
    assert len(uninterrupted["observations"]) == 460
