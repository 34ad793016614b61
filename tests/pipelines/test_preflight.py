"""The checks a run makes before crawling (pipelines/preflight.py): a data directory it can make
and write in, a working database no other process holds, room on the disk. Each refusal is one
paragraph naming the path and the cause."""

from __future__ import annotations

import subprocess
from pathlib import Path

import duckdb
import pytest

from pipelines.preflight import (
    HEADROOM_BYTES,
    MIB,
    MIN_FREE_ENV,
    DiskRefused,
    check_ready_to_write,
    describe_open_failure,
    required_free_bytes,
)
from tests.helpers.writers import held_for_writing

PLENTY = 1 << 40


def plenty(_folder: Path) -> int:
    return PLENTY


def paths(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "data"
    return data, data / ".work" / "prices.db"


def test_a_fresh_data_directory_is_made_and_passes(tmp_path):
    data, work_db = paths(tmp_path)
    check_ready_to_write(data, work_db, free_bytes=plenty)
    assert work_db.parent.is_dir()
    # the probes are gone; the working database is a DuckDB file the run can open
    assert sorted(p.name for p in data.rglob("*")) == [".work", "prices.db"]
    duckdb.connect(str(work_db)).close()


def test_a_data_directory_that_cannot_be_made_is_named(tmp_path):
    (tmp_path / "blocker").write_text("a file where a directory should be")
    data = tmp_path / "blocker" / "data"
    with pytest.raises(DiskRefused) as refused:
        check_ready_to_write(data, data / ".work" / "prices.db", free_bytes=plenty)
    message = str(refused.value)
    assert f"the directory {data} does not exist and cannot be created" in message
    assert "Not a directory" in message and "Nothing was crawled" in message


@pytest.fixture
def immutable_folder(tmp_path):
    """A directory no one may write in, root included (root passes permission checks, but not
    the immutable attribute of ext4/XFS/btrfs)."""
    folder = tmp_path / "data"
    folder.mkdir()
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode:
        pytest.skip("chattr +i is not available here")
    yield folder
    subprocess.run(["chattr", "-i", str(folder)], check=True)


def test_a_directory_that_takes_no_file_is_named(immutable_folder):
    with pytest.raises(DiskRefused) as refused:
        check_ready_to_write(immutable_folder, immutable_folder / ".work" / "prices.db",
                             free_bytes=plenty)
    assert (f"cannot write in {immutable_folder} (Operation not permitted)"
            in str(refused.value))
    assert not (immutable_folder / ".work").exists()


def test_a_working_database_another_process_holds_names_the_process(tmp_path):
    data, work_db = paths(tmp_path)
    work_db.parent.mkdir(parents=True)
    with held_for_writing(work_db) as holder, pytest.raises(DiskRefused) as refused:
        check_ready_to_write(data, work_db, free_bytes=plenty)
    message = str(refused.value)
    assert f"the working database {work_db} is locked by process {holder.pid} (" in message
    assert "import sys, duckdb" in message         # its command line, from /proc
    assert "\n" not in message                     # one paragraph
    assert "Nothing was crawled and nothing was changed." in message


def test_without_the_database_check_a_held_database_passes(tmp_path):
    # the multiprocess crawl steps run beside the run's own load steps, which hold the file
    data, work_db = paths(tmp_path)
    work_db.parent.mkdir(parents=True)
    with held_for_writing(work_db):
        check_ready_to_write(data, work_db, open_database=False, free_bytes=plenty)


def test_a_working_file_that_is_not_duckdb_is_named(tmp_path):
    data, work_db = paths(tmp_path)
    work_db.parent.mkdir(parents=True)
    work_db.write_bytes(b"not a database" * 1000)
    with pytest.raises(DiskRefused, match=r"prices.db is not a DuckDB database \(IO Error: The "
                                          r"file .* is not a valid DuckDB database file!\)"):
        check_ready_to_write(data, work_db, free_bytes=plenty)


def test_a_lock_message_without_a_pid_still_says_locked():
    message = describe_open_failure(Path("/d/.work/prices.db"),
                                    'IO Error: Could not set lock on file "/d/.work/prices.db"')
    assert "/d/.work/prices.db is locked by another process." in message


def test_the_free_space_floor_is_the_database_plus_headroom(tmp_path, monkeypatch):
    monkeypatch.delenv(MIN_FREE_ENV, raising=False)
    _, work_db = paths(tmp_path)
    assert required_free_bytes(work_db) == HEADROOM_BYTES            # no database yet
    work_db.parent.mkdir(parents=True)
    work_db.write_bytes(b"\0" * (3 * MIB))
    Path(f"{work_db}.wal").write_bytes(b"\0" * MIB)
    assert required_free_bytes(work_db) == 4 * MIB + HEADROOM_BYTES


def test_too_little_free_space_is_refused_naming_both_figures(tmp_path, monkeypatch):
    monkeypatch.delenv(MIN_FREE_ENV, raising=False)
    data, work_db = paths(tmp_path)
    seen = []

    def nearly_full(folder: Path) -> int:
        seen.append(folder)
        return 5 * MIB

    with pytest.raises(DiskRefused) as refused:
        check_ready_to_write(data, work_db, free_bytes=nearly_full)
    message = str(refused.value)
    assert f"5.0 MB free on the filesystem of {data}; a run needs at least 200.0 MB" in message
    assert MIN_FREE_ENV in message
    assert not work_db.exists()        # refused before the database was opened (or made)
    assert seen == [data]              # the first folder short of room ends it


@pytest.mark.parametrize("floor, free, passes", [("0", 0, True), ("50", 49 * MIB, False),
                                                 ("50", 50 * MIB, True), ("0.5", MIB, True)])
def test_the_floor_can_be_set(tmp_path, monkeypatch, floor, free, passes):
    monkeypatch.setenv(MIN_FREE_ENV, floor)
    data, work_db = paths(tmp_path)
    if passes:
        check_ready_to_write(data, work_db, free_bytes=lambda _: free)
    else:
        with pytest.raises(DiskRefused, match=r"a run needs at least 50\.0 MB"):
            check_ready_to_write(data, work_db, free_bytes=lambda _: free)


@pytest.mark.parametrize("floor", ["lots", "-1", "nan", "inf"])
def test_a_floor_that_is_not_a_size_is_refused(tmp_path, monkeypatch, floor):
    monkeypatch.setenv(MIN_FREE_ENV, floor)
    data, work_db = paths(tmp_path)
    with pytest.raises(DiskRefused, match=f"{MIN_FREE_ENV}='{floor}' is not a number of MB"):
        check_ready_to_write(data, work_db, free_bytes=plenty)


def test_the_real_filesystem_is_asked_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv(MIN_FREE_ENV, str(1 << 40))      # a petabyte: no test machine has it
    data, work_db = paths(tmp_path)
    with pytest.raises(DiskRefused, match="free on the filesystem of"):
        check_ready_to_write(data, work_db)
