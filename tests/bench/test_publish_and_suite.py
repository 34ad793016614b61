"""Publishing the database (pipelines/publish.py: a reflink or a copy, then a rename) and the
bench's test-suite figure (tests/workshop/bench/suite.py): a suite run on a fresh clone of a tiny
repository, passing and failing, and the last recorded figure reported when none is run.
No timing is compared with anything."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import duckdb
import pytest

import pipelines.publish as publish
from pipelines.publish import clone_or_copy, publish_database, reflink_supported
from tests.workshop.bench import last_suite_figure, suite_bench, summary_counts, targets

TABLES = "select table_schema || '.' || table_name from information_schema.tables order by 1"


def _database(path: Path, rows: int) -> Path:
    with duckdb.connect(str(path)) as con:
        con.execute("create schema marts")
        con.execute("create table marts.latest_prices as select range as id from range(?)",
                    [rows])
        con.execute("create table observations as select range as id from range(?)", [rows])
        con.execute("checkpoint")
    return path


def _tables(path: Path) -> dict[str, int]:
    with duckdb.connect(str(path), read_only=True) as con:
        names = con.execute(TABLES).fetchall()
        return {n: con.execute(f"select count(*) from {n}").fetchone()[0] for (n,) in names}


def test_the_published_copy_has_every_table_and_the_same_bytes(tmp_path):
    work = _database(tmp_path / "work.db", 1000)
    target = tmp_path / "data" / "prices.db"
    assert publish_database(work, target) == work.stat().st_size
    assert target.read_bytes() == work.read_bytes()
    assert _tables(target) == {"main.observations": 1000, "marts.latest_prices": 1000}
    assert not list(target.parent.glob(".prices.db.*.tmp"))


def test_a_reader_of_the_old_file_keeps_it_whole_and_never_blocks_the_writer(tmp_path):
    work = _database(tmp_path / "work.db", 10)
    target = tmp_path / "prices.db"
    publish_database(work, target)
    reader = duckdb.connect(str(target), read_only=True)
    try:
        with duckdb.connect(str(work)) as writer:   # the working file is never the reader's
            writer.execute("insert into observations select range from range(10, 25)")
            writer.execute("checkpoint")
        publish_database(work, target)
        assert reader.execute("select count(*) from observations").fetchone()[0] == 10
    finally:
        reader.close()
    assert _tables(target)["main.observations"] == 25


def test_without_block_sharing_it_copies(tmp_path, monkeypatch):
    def refuse(*_args):
        raise OSError(95, "Operation not supported")

    monkeypatch.setattr(publish.fcntl, "ioctl", refuse)
    source = tmp_path / "source.db"
    source.write_bytes(b"x" * 100_000)
    assert clone_or_copy(source, tmp_path / "copy.db") == "copy"
    assert (tmp_path / "copy.db").read_bytes() == source.read_bytes()
    assert reflink_supported(tmp_path) is False
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.db", "source.db"]   # no probes


def test_the_method_is_the_filesystems(tmp_path):
    source = tmp_path / "source.db"
    source.write_bytes(b"y" * 4096)
    method = clone_or_copy(source, tmp_path / "copy.db")
    assert method == ("reflink" if reflink_supported(tmp_path) else "copy")
    assert (tmp_path / "copy.db").read_bytes() == source.read_bytes()


def test_a_failed_publish_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    work = _database(tmp_path / "work.db", 5)
    target = tmp_path / "prices.db"
    publish_database(work, target)
    before = target.read_bytes()

    def fail(*_args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(publish, "clone_or_copy", fail)
    with pytest.raises(OSError, match="No space"):
        publish_database(work, target)
    assert target.read_bytes() == before
    assert not list(tmp_path.glob(".prices.db.*.tmp"))


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", *args],
                   cwd=repo, check=True, capture_output=True, timeout=60)


@pytest.fixture
def tiny_repo(tmp_path) -> Path:
    """A committed repository with two passing tests and, uncommitted, a failing one: a fresh
    clone must not see it."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    # the suite figure runs `make test`'s tier (--tier fast), an option the project's conftest adds
    (repo / "tests" / "conftest.py").write_text("def pytest_addoption(parser):\n"
                                                "    parser.addoption('--tier')\n")
    (repo / "tests" / "test_ok.py").write_text("def test_one():\n    pass\n\n\n"
                                               "def test_two():\n    pass\n")
    _git(repo, "init", "--quiet")
    _git(repo, "add", ".")
    _git(repo, "commit", "--quiet", "-m", "two tests")
    (repo / "tests" / "test_uncommitted.py").write_text("def test_bad():\n    assert False\n")
    return repo


def test_the_suite_runs_on_a_fresh_clone_and_is_recorded(tiny_repo, tmp_path):
    out = tmp_path / "bench"
    record = suite_bench(tiny_repo, out)
    assert record["exit_code"] == 0 and record["passed"]
    assert record["counts"] == {"passed": 2}                  # the uncommitted test is not there
    assert len(record["commit"]) == 40
    assert record["seconds"] > 0 and record["cpu_seconds"] >= 0
    assert record["command"].startswith(".venv/bin/python -m pytest -q -p no:cacheprovider -x")
    saved = json.loads(Path(record["recorded_in"]).read_text(encoding="utf-8"))
    assert saved["counts"] == record["counts"]
    assert last_suite_figure(out)["recorded_in"] == record["recorded_in"]
    (row,) = [r for r in targets({"suite": record}) if r["figure"].startswith("make test")]
    assert row["value"] == record["seconds"] and row["met"] in (True, False)


def test_a_failing_suite_has_no_time_to_compare(tiny_repo, tmp_path):
    (tiny_repo / "tests" / "test_uncommitted.py").rename(tiny_repo / "tests" / "test_zbad.py")
    _git(tiny_repo, "add", ".")
    _git(tiny_repo, "commit", "--quiet", "-m", "a failing test")
    record = suite_bench(tiny_repo, tmp_path / "bench")
    assert record["exit_code"] == 1 and not record["passed"]
    assert record["counts"] == {"passed": 2, "failed": 1}
    (row,) = [r for r in targets({"suite": record}) if r["figure"].startswith("make test")]
    assert (row["value"], row["met"]) == (None, None)
    assert row["gap"] == "not measured: the suite failed (exit code 1)"


def test_the_last_recorded_figure_is_the_newest_readable_one(tmp_path):
    assert last_suite_figure(tmp_path) is None
    (tmp_path / "suite-20260101T000000Z.json").write_text(json.dumps({"seconds": 1.0}))
    (tmp_path / "suite-20260102T000000Z.json").write_text(json.dumps({"seconds": 2.0}))
    assert last_suite_figure(tmp_path)["seconds"] == 2.0
    (tmp_path / "suite-20260103T000000Z.json").write_text("{half a file")
    assert last_suite_figure(tmp_path) is None                # never a stale figure as new


@pytest.mark.parametrize("line, counts", [
    ("812 passed, 3 skipped, 1 xfailed in 600.12s (0:10:00)",
     {"passed": 812, "skipped": 3, "xfailed": 1}),
    ("1 failed, 40 passed, 2 errors in 12.00s", {"failed": 1, "passed": 40, "error": 2}),
    ("no summary at all", {}),
])
def test_summary_counts(line, counts):
    assert summary_counts("some output\n" + line + "\n") == counts
