"""Publishing what changed (pipelines/generations.py): the generation a run brings up to date in
place equals a whole copy of the working database (every published table's rows, the views,
macros and comments, no internal table) run after run: hourly updates, a full rebuild, and a
fallback; and each unexpected state makes it copy the whole file instead (a generation held by a
read-only reader, written by a writer session, a sync killed half way), leaving data/prices.db
whole meanwhile."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

import pipelines.generations as generations
from pipelines.generations import (
    GENERATIONS,
    current_generation,
    generation_path,
    published_catalog,
)
from pipelines.publish import publish_generation
from pipelines.warehouse.comments import INTERNAL_TABLES
from pipelines.warehouse.crawl_first_days import first_new_day_since
from tests.helpers.simulated import SimulatedHours
from tests.helpers.writers import held_for_writing

HOURS = SimulatedHours(datetime(2026, 4, 27, tzinfo=UTC), 2, ("idc_ulanqab", "vultr"),
                       seed=3, every_hours=12)



def differences(work: Path, published: Path) -> list[str]:
    """What differs between `published` and a whole copy of `work` without its internal tables."""
    con = duckdb.connect()
    try:
        con.execute(f"attach '{work}' as work (read_only)")
        con.execute(f"attach '{published}' as pub (read_only)")
        found = []
        if published_catalog(con, "pub") != published_catalog(con, "work"):
            found.append("catalog: tables, columns, views, macros or comments")
        for table in generations.published_tables(con):
            for a, b in (("work", "pub"), ("pub", "work")):
                extra = con.execute(f"select count(*) from (from {a}.{table} except all "
                                    f"from {b}.{table})").fetchone()[0]
                if extra:
                    found.append(f"{table}: {extra} rows in {a} only")
        held = {f"{s}.{t}" for s, t in con.execute(
            "select schema_name, table_name from duckdb_tables() where database_name = 'pub'"
        ).fetchall()}
        found += [f"{t}: internal, published" for t in INTERNAL_TABLES if t in held]
        return found
    finally:
        con.close()


def publish(work: Path, target: Path, **kwargs) -> dict:
    published = publish_generation(work, target, **kwargs)
    assert differences(work, target) == []
    return published


def test_each_hour_updates_the_other_generation_to_a_whole_copy(work, tmp_path):
    target = tmp_path / "data" / "prices.db"
    assert [publish(work, target)["method"] for _ in range(2)] == ["copy", "copy"]
    assert current_generation(target) == "b"
    for n in range(2):
        HOURS.update(work, n)
        published = publish(work, target)
        assert published["method"] == "generations", published["why"]
        assert published["tables"]["main.observations"].startswith("rows after")
        assert "unchanged" in published["tables"].values()    # a constant table, not copied
        assert any(how.startswith("from ") for how in published["tables"].values())
        assert current_generation(target) == "ab"[n % 2]
    HOURS.update(work, 2, full=True)          # every model rebuilt from scratch: whole tables
    published = publish(work, target)
    assert published["method"] == "generations"
    assert not any(how.startswith("from ") for how in published["tables"].values())


def test_a_changed_catalog_copies_the_whole_file(work, tmp_path):
    target = tmp_path / "prices.db"
    publish(work, target)
    publish(work, target)
    with duckdb.connect(str(work)) as con:
        con.execute("create view main.newer as select 1 as one")
        con.execute("comment on table observations is 'a new comment'")
    published = publish(work, target)
    assert published["method"] == "copy" and "changed" in published["why"]
    assert publish(work, target)["method"] == "copy"      # the other one is behind too
    assert publish(work, target)["method"] == "generations"


def test_a_generation_a_reader_holds_is_copied_whole_and_the_reader_keeps_it(work, tmp_path):
    target = tmp_path / "prices.db"
    publish(work, target)
    held = generation_path(target, "a")
    reader = subprocess.Popen(
        [sys.executable, "-c", "import sys, duckdb\n"
         f"con = duckdb.connect({str(target)!r}, read_only=True)\n"
         "print(con.execute('select count(*) from observations').fetchone()[0], flush=True)\n"
         "sys.stdin.readline()\n"
         "print(con.execute('select count(*) from observations').fetchone()[0], flush=True)\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        before = int(reader.stdout.readline())
        publish(work, target)                      # generation b; the reader holds a
        HOURS.land(work, 0)
        published = publish(work, target)          # a is due: held, so a new file
        assert published["method"] == "copy" and "lock" in published["why"]
        assert current_generation(target) == "a"
        reader.stdin.write("\n")
        reader.stdin.flush()
        assert int(reader.stdout.readline()) == before    # its snapshot, undisturbed
    finally:
        reader.kill()
        reader.communicate(timeout=30)
    assert held.exists()


def test_a_generation_a_writer_session_changed_is_copied_whole(work, tmp_path):
    target = tmp_path / "prices.db"
    publish(work, target)
    publish(work, target)                 # data/prices.db is generation b
    with held_for_writing(target, "delete from observations where true", "checkpoint"):
        pass                              # a `duckdb data/prices.db` session wrote to it
    HOURS.land(work, 0)
    assert publish(work, target)["method"] == "generations"          # a: untouched
    published = publish(work, target)                               # b: written since
    assert published["method"] == "copy" and "written since" in published["why"]


def test_a_failure_mid_sync_copies_instead(work, tmp_path, monkeypatch):
    target = tmp_path / "prices.db"
    publish(work, target)
    publish(work, target)
    HOURS.land(work, 0)

    def fail(*_args):
        raise duckdb.IOException("the disk said no")
    monkeypatch.setattr(generations, "append_new_rows", fail)
    published = publish(work, target)
    assert published["method"] == "copy" and "the disk said no" in published["why"]


def test_a_failure_before_the_switch_leaves_the_link_and_the_next_run_goes_on(work, tmp_path):
    target = tmp_path / "prices.db"
    publish(work, target)
    publish(work, target)
    old = target.read_bytes()
    HOURS.land(work, 0)

    def refuse() -> None:
        raise OSError(28, "No space left on device")
    with pytest.raises(OSError, match="No space"):
        publish_generation(work, target, before_rename=refuse)
    assert target.read_bytes() == old and current_generation(target) == "b"
    assert publish(work, target)["method"] == "generations"    # a, as written, is recorded


KILLED_MID_SYNC = """
import os, sys
import pipelines.generations as g
from pathlib import Path
from pipelines.publish import publish_generation
def die(*_args):
    os._exit(9)
g.append_new_rows = die
publish_generation(Path(sys.argv[1]), Path(sys.argv[2]))
"""


def test_a_sync_killed_half_way_leaves_the_old_link_whole(work, tmp_path):
    target = tmp_path / "prices.db"
    publish(work, target)
    publish(work, target)
    HOURS.land(work, 0)
    before = target.read_bytes()
    proc = subprocess.run([sys.executable, "-c", KILLED_MID_SYNC, str(work), str(target)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr
    assert current_generation(target) == "b" and target.read_bytes() == before
    published = publish(work, target)
    assert published["method"] == "copy" and "no record" in published["why"]


def both_generations_written(work: Path, tmp_path: Path) -> Path:
    """data/prices.db published twice (each generation a whole copy of `work`)."""
    target = tmp_path / "prices.db"
    publish(work, target)
    publish(work, target)
    return target


def test_a_crawl_row_written_after_its_insert_reaches_each_generation(work, tmp_path):
    """raw.crawls is synced by the rows added since and the rows a generation holds still open
    (passing, not normalized), not compared whole: a held crawl both generations hold open, then
    normalized, reaches each; a decision (an append-only table) too."""
    target = tmp_path / "prices.db"
    with duckdb.connect(str(work)) as con:
        con.execute("insert into raw.crawls (crawl_id, source, mode, passed, offers, status) "
                    "values ('held-1', 'vultr', 'simulated', true, 0, 'held')")
    publish(work, target)
    publish(work, target)
    HOURS.land(work, 0)
    with duckdb.connect(str(work)) as con:
        con.execute("update raw.crawls set status = 'passed', normalized_at = now(), "
                    "normalized_rows = 0 where crawl_id = 'held-1'")
        con.execute("insert into raw.crawl_decisions (crawl_id, source, decided_at, decision, "
                    "decided_by, reason) values ('held-1', 'vultr', now(), 'accepted', "
                    "'person:test', 'checked by hand')")
    for _ in GENERATIONS:
        published = publish(work, target)
        assert published["method"] == "generations", published["why"]
        assert published["tables"]["raw.crawl_decisions"] == "rows after 0"
        assert published["tables"]["raw.crawls"].endswith("rows by crawl_id")


def test_a_crawl_row_deleted_copies_the_whole_file(work, tmp_path):
    target = both_generations_written(work, tmp_path)
    with duckdb.connect(str(work)) as con:
        con.execute("delete from raw.crawls "
                    "where crawl_id = (select min(crawl_id) from raw.crawls)")
    published = publish(work, target)
    assert published["method"] == "copy" and "raw.crawls" in published["why"]


def test_a_record_without_the_catalog_digest_reads_the_generation_catalog(work, tmp_path):
    """A generation recorded before the digest was: its catalog is read and compared instead."""
    target = both_generations_written(work, tmp_path)
    state = generations.state_path(generation_path(target, "a"))
    recorded = json.loads(state.read_text(encoding="utf-8"))
    del recorded["catalog"]
    state.write_text(json.dumps(recorded), encoding="utf-8")
    HOURS.land(work, 0)
    assert publish(work, target)["method"] == "generations"
    with duckdb.connect(str(work)) as con:
        con.execute("create view main.newer as select 1 as one")
    published = publish(work, target)
    assert published["method"] == "copy" and "changed" in published["why"]


BUILT = "2026-04-29T10:00:00.000000+00:00"
AT = datetime(2026, 4, 29, 10, tzinfo=UTC)
D1, D2 = date(2026, 4, 28), date(2026, 4, 29)


@pytest.mark.parametrize(("loaded", "expected"), [
    ([], (None, False)),                                             # nothing loaded since
    ([(AT - timedelta(hours=1), D1, True)], (None, False)),          # loaded before the build
    ([(AT, D2, True), (AT + timedelta(hours=1), D1, True)], (D1, False)),   # the earliest day
    ([(AT, None, True)], (None, False)),                             # a crawl with no rows
    ([(AT, D2, True), (AT, None, False)], (D2, True)),               # one day not cached
    ([(AT - timedelta(hours=1), None, False), (AT, D2, True)], (D2, False)),
])
def test_the_first_new_day_since_a_build(loaded, expected):
    """The runner's rule (crawl_first_days.first_new_day_since), given the build time as the
    publish holds it (ISO text) and as the runner reads it (a datetime)."""
    assert first_new_day_since(loaded, BUILT) == expected
    assert first_new_day_since(loaded, AT) == expected
