"""The pieces that keep a failed step where it happened (issue 30), in-process: the working
database's connection is closed however a step's block ends; staged feeds move into place
together, or not at all; a failure right before the database's rename leaves the old file; a
run that crawled and landed nothing is told apart from one that crawled nothing."""

from __future__ import annotations

import duckdb
import pytest

from pipelines.defs.feeds import nothing_landed
from pipelines.publish import move_staged, publish_database, staging_dir
from pipelines.resources import WorkingDuckDB
from pipelines.warehouse.db import DUCKDB_CONFIG, ensure_schema


def test_a_failed_block_releases_the_working_database(tmp_path):
    """The issue's mask: the failed step's connection stayed open, and the next open of the
    same file under another configuration failed with "different configuration"."""
    path = tmp_path / "work.db"
    resource = WorkingDuckDB(database=str(path), connection_config=DUCKDB_CONFIG)
    with pytest.raises(RuntimeError), resource.get_connection() as con:
        con.execute("create table t (x int)")
        kept = con      # a traceback (or anything) holding it must not keep it open
        raise RuntimeError("the step failed")
    with pytest.raises(duckdb.ConnectionException):
        kept.execute("select 1")
    with duckdb.connect(str(path)) as other:     # the publish's own, default configuration
        assert other.execute("select count(*) from t").fetchone() == (0,)


def test_the_plain_dagster_resource_is_what_kept_it_open(tmp_path):
    """Why WorkingDuckDB exists: dagster-duckdb closes only when the block succeeds (a test
    that fails the day upstream fixes it, so the wrapper can go)."""
    from dagster_duckdb import DuckDBResource

    resource = DuckDBResource(database=str(tmp_path / "work.db"),
                              connection_config=DUCKDB_CONFIG)
    with pytest.raises(RuntimeError), resource.get_connection() as con:
        kept = con
        raise RuntimeError("the step failed")
    assert kept.execute("select 1").fetchone() == (1,)    # still open
    kept.close()


def test_staged_files_move_into_place_and_the_stage_goes(tmp_path):
    feeds = tmp_path / "feeds"
    feeds.mkdir()
    (feeds / "a.csv").write_text("old\n")
    staged = staging_dir(feeds)
    assert staged == tmp_path / ".feeds.next"
    staged.mkdir()
    for name in ("a.csv", "b.parquet"):
        (staged / name).write_text(f"new {name}\n")
    moved = move_staged(staged, feeds)
    assert sorted(p.name for p in moved) == ["a.csv", "b.parquet"]
    assert (feeds / "a.csv").read_text() == "new a.csv\n" and not staged.exists()
    assert move_staged(staged, feeds) == []          # nothing staged: nothing moved


def test_staged_files_are_not_moved_onto_a_file(tmp_path):
    (tmp_path / "feeds").write_text("a file where the folder belongs\n")
    staged = staging_dir(tmp_path / "feeds")
    staged.mkdir()
    (staged / "a.csv").write_text("new\n")
    with pytest.raises(NotADirectoryError, match="is a file, not a directory"):
        move_staged(staged, tmp_path / "feeds")
    assert (staged / "a.csv").exists()


def test_a_failure_before_the_rename_leaves_the_old_database(tmp_path):
    work, target = tmp_path / "work.db", tmp_path / "prices.db"
    with duckdb.connect(str(work)) as con:
        con.execute("create table t as select 42 as x")
    target.write_bytes(b"the old published file")

    def refuse() -> None:
        raise OSError(28, "No space left on device")
    with pytest.raises(OSError, match="No space left"):
        publish_database(work, target, before_rename=refuse)
    assert target.read_bytes() == b"the old published file"
    assert not list(tmp_path.glob(".prices.db.*.tmp*"))
    called = []
    publish_database(work, target, before_rename=lambda: called.append(True))
    assert called == [True]
    with duckdb.connect(str(target), read_only=True) as con:
        assert con.execute("select x from t").fetchone() == (42,)


@pytest.mark.parametrize(("crawls", "landed_nothing"), [
    ([], False),                                        # the report job: it crawls nothing
    ([("r1", True), ("r1", False)], False),             # one source landed
    ([("r1", False), ("r1", False)], True),             # every source failed
    ([("r0", True), ("r1", False)], True),              # an earlier run's crawl does not count
])
def test_a_run_that_crawled_and_landed_nothing(crawls, landed_nothing):
    con = duckdb.connect()
    ensure_schema(con)
    for n, (run_id, passed) in enumerate(crawls):
        con.execute("insert into raw.crawls (crawl_id, run_id, source, mode, passed, status, "
                    "offers, failures) values (?, ?, 's', 'replay', ?, ?, 0, [])",
                    [f"c{n}", run_id, passed, "passed" if passed else "failed"])
    assert nothing_landed(con, "r1") is landed_nothing


def test_a_held_working_database_checkpoints_each_step_and_is_released_for_the_publish(
        tmp_path, monkeypatch):
    """A run in process holds the working database open (resources.hold_working_database): a
    step's connection joins it, and as it closes its writes are checkpointed into the file and
    the WAL goes, as the last close did; once released, the publish opens the file under its own
    configuration (it would be refused while held)."""
    from pipelines import resources

    path = tmp_path / "work.db"
    monkeypatch.setattr(resources, "work_db_path", lambda: path)
    wal = tmp_path / "work.db.wal"
    with resources.hold_working_database():
        with resources.duckdb_from_env().get_connection() as con:
            con.execute("create table t as select 1 as x")
            assert wal.exists()
        assert not wal.exists()                        # checkpointed as the step closed
        with pytest.raises(duckdb.ConnectionException, match="different configuration"):
            duckdb.connect(str(path)).close()          # held: the publish's open is refused
        resources.release_working_database()
        with duckdb.connect(str(path)) as publish:     # released before the block ends
            assert publish.execute("select x from t").fetchall() == [(1,)]
    assert not resources._held
    with resources.hold_working_database():           # a run that fails before its publish
        pass
    assert not resources._held                         # ... leaves nothing held
    with duckdb.connect(str(path)) as publish:
        assert publish.execute("select x from t").fetchall() == [(1,)]
