"""The crash loop's checks (tests/workshop/crash_loop_checks.py) on handcrafted databases: the
loop itself runs `gpuprices run` dozens of times (docs/robustness.md, "Crash loop"); here only
its verdicts: equal tables pass, a missing row, a `dedupe` row, an extra quarantine row, a crawl
left pending or a broken published file fail, each named."""

from __future__ import annotations

import random
import shutil
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from pipelines.warehouse.db import ensure_schema
from tests.workshop.crash_loop import describe, plan
from tests.workshop.crash_loop_checks import (
    Event,
    compare_tables,
    crawl_problems,
    phase,
    published_problems,
    published_state,
    table_contents,
)

OBSERVATION = ("2026-11-28 09:10:00+00", "2026-11-28 09:00:00+00", "azure", "Azure", "cloud",
               "eastus", "US", "Virginia", "Boydton", False, "NC A100 v4", "A100", "80GB", 1,
               1.0, 80.0, "on_demand", "hour", 3.67, "USD", 26.5, 3.67, "2026-11-28", True,
               "https://example.test/a100", "sha256:ab", "azure:eastus:a100")


def _database(path: Path, crawl: str = "c1", hours: int = 1) -> Path:
    """A working database as a run over `hours` hours leaves it: one crawl per hour, one
    observation each, one quarantined item, a mart."""
    with duckdb.connect(str(path)) as con:
        ensure_schema(con)
        con.execute("create schema if not exists marts")
        con.execute("create table marts.latest (offer_id varchar, price decimal(18, 6))")
        con.execute("insert into marts.latest values ('azure:eastus:a100', 3.67)")
        for hour in range(hours):
            crawl_id = f"{crawl}-{hour}"
            row = list(OBSERVATION)
            row[0] = f"2026-11-28 {9 + hour:02d}:10:00+00"
            row[1] = f"2026-11-28 {9 + hour:02d}:00:00+00"
            # the 28 columns of the first release, then every later one null (the machine's
            # specs, how the source reached the offer, its calendar, a backfill's provenance)
            width = con.execute("select count(*) from duckdb_columns() where schema_name = "
                                "'main' and table_name = 'observations'").fetchone()[0]
            values = [*row, crawl_id]
            values += [None] * (width - len(values))
            con.execute(f"insert into observations values ({', '.join(['?'] * width)})", values)
            con.execute("insert into raw.crawls (crawl_id, source, mode, passed, offers, "
                        "normalized_at, normalized_rows) values (?, 'azure', 'replay', true, 1, "
                        "now(), 1)", [crawl_id])
            item = f'{{"observed_at": "{row[0]}"}}'
            con.execute("insert into raw.offers values (?, 0, 'azure', ?)", [crawl_id, item])
        con.execute("insert into quarantine values ('azure', ?, 1, 'price', 'not a price: 面议', "
                    "'{}', now(), 'sha')", [f"{crawl}-0"])
    return path


@pytest.fixture
def reference(tmp_path: Path) -> Path:
    return _database(tmp_path / "reference.db")


def test_equal_tables_pass_whatever_the_crawl_ids(reference, tmp_path):
    recovered = _database(tmp_path / "recovered.db", crawl="another-crawl")
    assert compare_tables(table_contents(recovered), table_contents(reference)) == []
    assert crawl_problems(recovered) == []


def test_a_missing_observation_fails_naming_the_table(reference, tmp_path):
    recovered = _database(tmp_path / "recovered.db")
    with duckdb.connect(str(recovered)) as con:
        con.execute("delete from observations")
    problems = compare_tables(table_contents(recovered), table_contents(reference), "working ")
    assert problems == ["working main.observations: 1 rows missing, 0 extra (0 against 1)"]


def test_a_missing_mart_fails(reference, tmp_path):
    recovered = _database(tmp_path / "recovered.db")
    with duckdb.connect(str(recovered)) as con:
        con.execute("drop table marts.latest")
    assert compare_tables(table_contents(recovered), table_contents(reference)) == \
        ["marts.latest missing"]


def test_a_dedupe_row_in_the_quarantine_fails(reference, tmp_path):
    recovered = _database(tmp_path / "recovered.db")
    with duckdb.connect(str(recovered)) as con:
        con.execute("update quarantine set stage = 'dedupe', reason = 'duplicate offer'")
    problems = compare_tables(table_contents(recovered), table_contents(reference))
    assert problems[0] == "main.quarantine: 1 dedupe rows"
    assert problems[1].startswith("main.quarantine: 1 rows missing, 1 extra")


def test_more_quarantine_rows_than_the_reference_fail(reference, tmp_path):
    recovered = _database(tmp_path / "recovered.db")
    with duckdb.connect(str(recovered)) as con:
        con.execute("insert into quarantine select source, 'c2', item_no, stage, reason, "
                    "raw_item, quarantined_at, raw_item_sha256 from quarantine")
    problems = compare_tables(table_contents(recovered), table_contents(reference))
    assert "main.quarantine: 2 rows, more than the reference's 1" in problems


def test_a_pending_crawl_and_one_marked_without_rows_fail(tmp_path):
    recovered = _database(tmp_path / "recovered.db", hours=3)
    with duckdb.connect(str(recovered)) as con:
        con.execute("update raw.crawls set normalized_at = null where crawl_id = 'c1-1'")
        con.execute("update raw.crawls set normalized_rows = 0 where crawl_id = 'c1-2'")
        con.execute("delete from observations where crawl_id = 'c1-2'")
    assert crawl_problems(recovered) == ["1 crawls left pending",
                                         "1 crawls marked normalized with 0 rows",
                                         "1 crawls marked normalized, their hour without rows"]


def test_the_published_file_is_old_new_or_a_problem(reference, tmp_path):
    new = _database(tmp_path / "new.db", hours=2)
    assert published_state(reference, old_rows=1, new_rows=2) == ("old", [])
    assert published_state(new, old_rows=1, new_rows=2) == ("new", [])
    half = tmp_path / "half.db"          # a copy cut inside DuckDB's file header
    half.write_bytes(new.read_bytes()[:100])
    state, problems = published_state(half, old_rows=1, new_rows=2)
    assert state == "broken" and problems[0].startswith("data/prices.db did not open")
    assert published_state(tmp_path / "absent.db", 1, 2)[0] == "absent"


def test_a_published_directory_with_a_temporary_copy_left_fails(reference, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copyfile(reference, data / "prices.db")
    assert published_problems(data) == []
    (data / ".prices.db.4242.tmp").write_bytes(b"half a copy")
    assert published_problems(data) == ["stale .prices.db.4242.tmp left"]


def test_the_phase_is_read_from_the_killed_runs_file_events():
    wal = Event(1.0, "work", "create", "prices.db.wal")
    tmp = Event(9.0, "data", "create", ".prices.db.77.tmp")
    assert phase([]) == "crawl (nothing written yet)"
    assert phase([wal, wal]) == "DuckDB write 2"
    assert phase([wal, tmp]) == "publish, before the rename"
    assert phase([wal, tmp, Event(9.1, "data", "moved", tmp.name)]) == \
        "publish, after the rename"


def test_the_plan_puts_four_kills_in_the_publish_window_and_repeats_with_its_seed():
    reference = {"publish_seconds": 0.05, "publish_writes": 2, "wal_creations": 30,
                 "seconds": 40.0}
    points = plan(20, random.Random(16), reference)
    assert Counter(kind for kind, _ in points) == {"publish": 4, "write": 4, "uniform": 12}
    publish = [trigger for kind, trigger in points if kind == "publish"]
    assert sum(t.steps[0][1] == "modify" for t in publish) == 2     # the copy under way
    assert all(0 <= t.delay <= 40.0 for kind, t in points if kind == "uniform")
    again = plan(20, random.Random(16), reference)
    assert [describe(*p) for p in again] == [describe(*p) for p in points]
