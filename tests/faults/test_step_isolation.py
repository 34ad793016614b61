"""A fault stays where it happened (issue 30): one failed step of `gpuprices run` releases what
it held, the steps that do not depend on it still run, the summary names it and its own error
first, and `data/prices.db` is the new one where its inputs (the models and the feeds) succeeded,
or the old one byte for byte, never new feeds beside an old database.

Each test runs the pipeline over idc_sinnet_bj and azure again on a copy of the session's clean
run, with one fault injected where it would really happen: a file where data/report or
data/feeds belongs, an alerts file that does not parse, an advisor history table of another
shape, a model's table replaced by a view, every source answering 503, a full file system and a
read-only one (the mounts in a private mount namespace, root only). About 20 s a run."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from pipelines.feed_days import STATE_NAME, dated_marts
from pipelines.warehouse.db import DUCKDB_CONFIG
from spiders.layout import REPO_ROOT, SNAPSHOT_DIR
from tests.helpers.runs import TWO_SOURCES

MASK = "different configuration"   # the masking error of the probe


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def published_crawls(data_dir: Path) -> int:
    with duckdb.connect(str(data_dir / "prices.db"), read_only=True) as con:
        return con.execute("select count(*) from raw.crawls").fetchone()[0]


def feed_times(data_dir: Path) -> dict[str, int]:
    """{file under feeds/, relative: its modification time}: a dated feed's days are files too."""
    feeds = data_dir / "feeds"
    return {str(p.relative_to(feeds)): p.stat().st_mtime_ns
            for p in feeds.rglob("*") if p.is_file()} if feeds.is_dir() else {}


def written_every_run(name: str) -> bool:
    """Whether a run that publishes writes this feed file again: every file of a feed written
    whole, and the record of the dated feeds; a dated feed's days (and its schema) only when its
    model rebuilt them (pipelines/feed_days.py), which a replay of the same pages does not."""
    dated = {table.split(".")[-1] for table in dated_marts()}
    return name.split("/")[0] not in dated and name.split(".")[0] not in dated


def env_for(data_dir: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "GPUPRICES_DATA_DIR": str(data_dir),
            "DAGSTER_HOME": str(data_dir.parent / "dagster_home"), **extra}


def run(data_dir: Path, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipelines.cli", "run", *TWO_SOURCES],
                          cwd=REPO_ROOT, env=env_for(data_dir, **extra), capture_output=True,
                          text=True, timeout=600)


def first_failure(stdout: str) -> str:
    """The summary's first line that names a failed step, unwrapped."""
    text = " ".join(stdout.split())
    start = text.find("step ")
    assert start >= 0 and " failed" in text[start:], stdout
    return text[start:start + 400]


def report_is_a_file(data_dir: Path, tmp_path: Path) -> dict:
    shutil.rmtree(data_dir / "report")
    (data_dir / "report").write_text("a file where the report folder belongs\n")
    return {}


def feeds_is_a_file(data_dir: Path, tmp_path: Path) -> dict:
    shutil.rmtree(data_dir / "feeds")
    (data_dir / "feeds").write_text("a file where the feeds folder belongs\n")
    return {}


def alerts_file_broken(data_dir: Path, tmp_path: Path) -> dict:
    rules = tmp_path / "alerts.toml"
    rules.write_text("[drop\nenabled = maybe\n", encoding="utf-8")
    return {"GPUPRICES_ALERTS_CONFIG": str(rules)}


def advisor_history_of_another_shape(data_dir: Path, tmp_path: Path) -> dict:
    with duckdb.connect(str(data_dir / ".work" / "prices.db"), config=DUCKDB_CONFIG) as con:
        con.execute("create schema if not exists advisor")
        con.execute("drop table if exists advisor.workload_advice_history")
        con.execute("create table advisor.workload_advice_history (legacy integer)")
    return {}


def model_table_is_a_view(data_dir: Path, tmp_path: Path) -> dict:
    with duckdb.connect(str(data_dir / ".work" / "prices.db"), config=DUCKDB_CONFIG) as con:
        con.execute("drop table marts.cheapest_offers")
        con.execute("create view marts.cheapest_offers as select 1 as legacy")
    return {}


# fault -> (its injection, the step that fails, words of that step's own error, whether
# prices.db is published all the same)
FAULTS: dict[str, tuple[Callable, str, str, bool]] = {
    "report": (report_is_a_file, "report__price_report", "is a file, not a directory", True),
    "feeds": (feeds_is_a_file, "mart_feeds", "is a file, not a directory", False),
    "alerts": (alerts_file_broken, "alerts__price_alerts", "alerts.toml", True),
    "advisor": (advisor_history_of_another_shape, "advisor__workload_advice", "Binder Error",
                True),
    "models": (model_table_is_a_view, "sql_models", "is of type View", False),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_failed_step_stays_put(fault, two_source_run, tmp_path):
    inject, step, words, published = FAULTS[fault]
    assert two_source_run.returncode == 0, two_source_run.stdout + two_source_run.stderr
    data_dir = two_source_run.copy_to(tmp_path)
    old_db, old_crawls = sha256(data_dir / "prices.db"), published_crawls(data_dir)
    extra = inject(data_dir, tmp_path)
    old_feeds = feed_times(data_dir)

    proc = run(data_dir, **extra)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert MASK not in out
    failure = first_failure(proc.stdout)
    assert failure.startswith(f"step {step} failed") and words in failure, failure
    assert proc.stdout.index(f"step {step} failed") < proc.stdout.index("sources")  # first
    if published:    # the new database and the new feeds, together
        assert published_crawls(data_dir) == old_crawls + 2
        new_feeds = feed_times(data_dir)
        assert new_feeds.keys() == old_feeds.keys() and all(
            new_feeds[name] > old_feeds[name] for name in new_feeds if written_every_run(name))
        assert STATE_NAME in new_feeds and all(
            new_feeds[name] >= old_feeds[name] for name in new_feeds)
        assert "were published all the same" in " ".join(proc.stdout.split())
    else:            # the old database and the old feeds, byte for byte
        assert sha256(data_dir / "prices.db") == old_db
        assert feed_times(data_dir) == old_feeds
        assert "were left as they were" in " ".join(proc.stdout.split())
    assert not list(data_dir.glob(".prices.db.*.tmp"))


def test_a_fault_that_depends_on_nothing_leaves_the_others_running(two_source_run, tmp_path):
    """The report failing: the alerts still ran, and the summary says so."""
    data_dir = two_source_run.copy_to(tmp_path)
    report_is_a_file(data_dir, tmp_path)
    proc = run(data_dir)
    text = " ".join(proc.stdout.split())
    assert "alerts: not checked this run" not in text and "alerts: " in text
    assert "report: not written this run" in text


def test_when_every_source_fails_nothing_is_republished(two_source_run, tmp_path):
    """Every crawl failing: exit 1, and prices.db, the feeds and the report stay as they were
    (the README once said so while all three were replaced)."""
    data_dir = two_source_run.copy_to(tmp_path)
    snapshots = tmp_path / "snapshots"
    for source in ("idc_sinnet_bj", "azure"):
        shutil.copytree(SNAPSHOT_DIR / source, snapshots / source)
        manifest = snapshots / source / "manifest.json"
        meta = json.loads(manifest.read_text(encoding="utf-8"))
        for entry in meta["entries"]:
            entry["status"] = 503
        manifest.write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    before = {name: sha256(data_dir / name) for name in ("prices.db", "report/index.html")}
    old_feeds = feed_times(data_dir)
    proc = run(data_dir, GPUPRICES_SNAPSHOT_DIR=str(snapshots))
    text = " ".join(proc.stdout.split())
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "every source failed" in text and "were left as they were" in text
    assert {name: sha256(data_dir / name) for name in before} == before
    assert feed_times(data_dir) == old_feeds
    assert "prices.db not replaced this run" in text


def in_namespace(mount: str, data_dir: Path, source: Path, commands: list[list[str]],
                 after: str = "true", **extra: str) -> list[subprocess.CompletedProcess]:
    """Each `gpuprices` command, in one private mount namespace after `mount`, then `after`
    (a shell line that may write under $LOGS what the mount held: it is gone with the
    namespace); their exit codes and outputs, read back from files."""
    logs = data_dir.parent / "logs"
    logs.mkdir()
    lines = [f"{mount} || exit 97"]
    for n, args in enumerate(commands):
        lines.append(f"{sys.executable} -m pipelines.cli {' '.join(args)} "
                     f"> {logs}/{n}.out 2>&1; echo $? > {logs}/{n}.rc")
    lines.append(after)
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                           "\n".join(lines)], cwd=REPO_ROOT,
                          env=env_for(data_dir, DATA=str(data_dir), SOURCE=str(source),
                                      LOGS=str(logs), **extra),
                          capture_output=True, text=True, timeout=900)
    if proc.returncode == 97:
        pytest.skip(f"mounts are not allowed here: {proc.stderr.strip()}")
    return [subprocess.CompletedProcess(args, int((logs / f"{n}.rc").read_text()),
                                        (logs / f"{n}.out").read_text(), "")
            for n, args in enumerate(commands)]


needs_mounts = pytest.mark.skipif(not shutil.which("unshare") or os.geteuid() != 0,
                                  reason="needs root and unshare for private mounts")


@needs_mounts
def test_a_full_disk_names_the_step_it_stopped_and_keeps_the_old_database(two_source_run,
                                                                          tmp_path):
    """The issue's full tmpfs: room for the crawl and the models, not for a second copy of the
    database. The step that ran out of space is named with its own error (the masking error
    is gone), prices.db and the feeds are the old ones, nothing half-written is left."""
    source = two_source_run.copy_to(tmp_path / "source")
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    shutil.copytree(source.parent / "dagster_home", tmp_path / "dagster_home")
    used_mb = sum(p.stat().st_size for p in source.rglob("*") if p.is_file()) // (1 << 20)
    old_db = sha256(source / "prices.db")
    old_feeds = sorted(f"{name} {ns // 10**9}" for name, ns in feed_times(source).items())
    [proc] = in_namespace(
        f'mount -t tmpfs -o size={used_mb + 12}m tmpfs "$DATA" && cp -a "$SOURCE"/. "$DATA"/',
        data_dir, source, [["run", *TWO_SOURCES]],
        after=('sha256sum "$DATA/prices.db" > "$LOGS/sha"; '
               '(cd "$DATA/feeds" && find . -type f -printf "%P %T@\\n") > "$LOGS/feeds"; '
               'ls -A "$DATA" > "$LOGS/top"'),
        GPUPRICES_MIN_FREE_MB="0")
    logs = data_dir.parent / "logs"
    assert proc.returncode == 1, proc.stdout
    assert MASK not in proc.stdout
    failure = first_failure(proc.stdout)
    assert "No space left on device" in failure or "Out of Space" in failure, failure
    assert "were left as they were" in " ".join(proc.stdout.split())
    assert (logs / "sha").read_text().split()[0] == old_db
    assert sorted(f"{line.rsplit(' ', 1)[0]} {int(float(line.rsplit(' ', 1)[1]))}"
                  for line in (logs / "feeds").read_text().splitlines()) == old_feeds
    left = (logs / "top").read_text().split()
    assert not [name for name in left if name.startswith(".prices.db.") or name == ".feeds.next"]


@needs_mounts
def test_a_read_only_data_directory_changes_nothing_and_says_so_in_one_line(two_source_run,
                                                                           tmp_path):
    """run refuses before crawling; report and export refuse their write; no traceback."""
    data_dir = two_source_run.copy_to(tmp_path)
    old_db = sha256(data_dir / "prices.db")
    procs = in_namespace('mount --bind "$DATA" "$DATA" && mount -o remount,ro,bind "$DATA"',
                         data_dir, data_dir, [["run", *TWO_SOURCES], ["report"], ["export"]])
    for proc in procs:
        assert proc.returncode == 1, proc.stdout
        assert "Traceback" not in proc.stdout
        assert "Read-only file system" in proc.stdout or "read-only file system" in proc.stdout
    assert sha256(data_dir / "prices.db") == old_db
