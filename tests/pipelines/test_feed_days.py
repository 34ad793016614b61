"""Dated feeds (pipelines/feed_days.py): a mart that grows with its history is published as a
file a day, and an hourly run writes only the days its models rebuilt, while the published files
always hold the mart's rows exactly (hour after hour, after a full rebuild, after a lost folder),
days that lost their rows lose their files, and the record of what the files hold moves last."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import duckdb

import pipelines.publish as publish
from pipelines.defs.feeds import FEED_TABLES, feed_source
from pipelines.feed_days import STATE_NAME, dated_marts, read_state, write_feeds
from pipelines.generations import model_states
from pipelines.publish import BOM, REPLACES, move_staged, staging_dir
from pipelines.simulate import DUCKDB_CONFIG
from tests.helpers.simulated import SimulatedHours

HOURS = SimulatedHours(datetime(2026, 4, 26, tzinfo=UTC), 3, ("idc_ulanqab", "vultr"),
                       seed=5, every_hours=8)



def publish_feeds(work: Path, feeds: Path, bom: bool = False) -> dict[str, dict]:
    """What mart_feeds and the publish do: stage every feed, then move them into `feeds`."""
    staged = staging_dir(feeds)
    feeds.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(work), config=DUCKDB_CONFIG) as con:
        written = dict(write_feeds(con, FEED_TABLES, staged, feeds, bom, feed_source))
    move_staged(staged, feeds)
    return written


def differences(work: Path, feeds: Path) -> list[str]:
    """Each dated mart's rows that its published files lack or add, and files of the wrong day."""
    found = []
    with duckdb.connect(str(work), config=DUCKDB_CONFIG) as con:
        for table in dated_marts():
            folder = feeds / table.split(".")[-1]
            files = f"'{folder}/*.parquet'"
            if not list(folder.glob("*.parquet")):
                if con.execute(f"select count(*) from {table}").fetchone()[0]:
                    found.append(f"{table}: no file")
                continue
            schema = json.loads(folder.with_suffix(".schema.json").read_text(encoding="utf-8"))
            column = schema["partitioned_by"]
            for a, b in ((table, files), (files, table)):
                extra = con.execute(f"select count(*) from (from {a} except all from {b})"
                                    ).fetchone()[0]
                if extra:
                    found.append(f"{table}: {extra} rows in {a} only")
            for day in folder.glob("*.parquet"):
                days = con.execute(f"select distinct {column}::varchar from '{day}'").fetchall()
                if days != [(day.stem,)]:
                    found.append(f"{day}: holds {days}")
            csv_rows = sum(len(p.read_text(encoding="utf-8-sig").splitlines()) - 1
                           for p in folder.glob("*.csv"))
            if csv_rows < con.execute(f"select count(*) from {table}").fetchone()[0]:
                found.append(f"{table}: CSV files short of rows")
    return found


def times(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}


def test_an_hour_writes_the_days_it_rebuilt_and_the_files_hold_the_marts(work, tmp_path):
    feeds = tmp_path / "feeds"
    first = publish_feeds(work, feeds)
    assert {t for t, w in first.items() if "days" in w} == set(dated_marts())
    assert all(first[t]["from"] is None for t in dated_marts())          # no record: every day
    assert "marts.price_history" in dated_marts() and differences(work, feeds) == []
    history = feeds / "price_history"
    before = times(history)
    assert len(before) == 2 * (HOURS.days + 1)       # a CSV and a Parquet file a local day
    for n in range(2):
        HOURS.update(work, n)
        written = publish_feeds(work, feeds)
        assert differences(work, feeds) == []
        since = written["marts.price_history"]["from"]
        assert since == HOURS.hour(0).date().isoformat(), written
        assert 0 < written["marts.price_history"]["days"] < HOURS.days
        after = times(history)
        assert {name for name in after if after[name] != before.get(name)} == {
            name for name in after if name[:10] >= since}     # the older days untouched
        before = after
    with duckdb.connect(str(work), read_only=True) as con:
        built = model_states(con, "work")
    assert read_state(feeds)["marts.price_history"]["build"] == \
        built["intermediate.int_offer_local_daily"]
    undated = [t for t in FEED_TABLES if t not in dated_marts()]
    assert all((feeds / f"{t.split('.')[-1]}.csv").is_file() for t in undated)


def test_a_rebuild_from_scratch_writes_every_day_and_drops_days_without_rows(work, tmp_path):
    feeds = tmp_path / "feeds"
    publish_feeds(work, feeds)
    stray = feeds / "price_history" / "2099-01-01.csv"   # a day the mart no longer has
    stray.write_text("local_date\n2099-01-01\n", encoding="utf-8")
    HOURS.update(work, 0, full=True)
    written = publish_feeds(work, feeds)
    assert all(written[t]["from"] is None for t, m in dated_marts().items() if m.base)
    assert not stray.exists() and differences(work, feeds) == []


def test_a_lost_folder_or_record_is_written_whole(work, tmp_path):
    feeds = tmp_path / "feeds"
    publish_feeds(work, feeds)
    shutil.rmtree(feeds / "price_history")
    HOURS.update(work, 0)
    written = publish_feeds(work, feeds)
    assert written["marts.price_history"]["from"] is None
    assert written["marts.spot_discount"]["from"] is not None
    (feeds / STATE_NAME).write_text("{not json", encoding="utf-8")
    written = publish_feeds(work, feeds)
    assert all(written[t]["from"] is None for t in dated_marts())
    assert differences(work, feeds) == []


def test_an_hour_that_changed_nothing_writes_no_day(work, tmp_path):
    feeds = tmp_path / "feeds"
    publish_feeds(work, feeds)
    before = times(feeds / "price_history")
    written = publish_feeds(work, feeds)
    assert all(written[t]["from"] == "unchanged" for t in dated_marts())
    assert times(feeds / "price_history") == before


def test_dated_csv_files_carry_the_bom_on_request(work, tmp_path):
    feeds = tmp_path / "feeds"
    publish_feeds(work, feeds, bom=True)
    files = list((feeds / "price_history").glob("*.csv"))
    assert files and all(p.read_bytes().startswith(BOM) for p in files)
    assert differences(work, feeds) == []


def test_the_record_moves_after_every_file_and_a_folder_replaces_its_single_file(tmp_path,
                                                                              monkeypatch):
    feeds, staged = tmp_path / "feeds", staging_dir(tmp_path / "feeds")
    feeds.mkdir()
    (feeds / "m.csv").write_text("old single file\n")
    (feeds / "m.parquet").write_bytes(b"old")
    (staged / "m").mkdir(parents=True)
    for name in ("2026-05-01.csv", "2026-05-01.parquet"):
        (staged / "m" / name).write_text("day\n")
    (staged / "m" / REPLACES).write_text("2026-05-01")
    (staged / "a.csv").write_text("a\n")
    (staged / STATE_NAME).write_text("{}")
    order = []
    real_replace = os.replace

    def replace(src, dst):
        order.append(Path(dst).name)
        real_replace(src, dst)
    monkeypatch.setattr(publish.os, "replace", replace)
    move_staged(staged, feeds)
    assert order[-1] == STATE_NAME and set(order) == {
        "a.csv", "2026-05-01.csv", "2026-05-01.parquet", STATE_NAME}
    assert not (feeds / "m.csv").exists() and not (feeds / "m.parquet").exists()
    assert not (feeds / "m" / REPLACES).exists() and not staged.exists()


def test_a_feed_that_is_one_file_again_loses_its_days(tmp_path):
    feeds, staged = tmp_path / "feeds", staging_dir(tmp_path / "feeds")
    (feeds / "m").mkdir(parents=True)
    (feeds / "m" / "2026-05-01.csv").write_text("day\n")
    staged.mkdir()
    (staged / "m.csv").write_text("whole\n")
    move_staged(staged, feeds)
    assert (feeds / "m.csv").read_text() == "whole\n" and not (feeds / "m").exists()


def test_a_view_of_every_day_is_written_by_the_days_whose_rows_changed(work, tmp_path):
    """chart_points and card_history: no model says which of their days moved (their ranks and
    segments come from every day), so each day's rows are compared by digest."""
    feeds = tmp_path / "feeds"
    assert dated_marts()["marts.chart_points"].base is None
    first = publish_feeds(work, feeds)
    assert first["marts.chart_points"]["days"] > 1
    points = feeds / "chart_points"
    before = times(points)
    HOURS.update(work, 0)
    written = publish_feeds(work, feeds)
    assert differences(work, feeds) == []
    with duckdb.connect(str(work), read_only=True) as con:
        moved = {d for (d,) in con.execute(  # the days whose rows the hour changed or added
            "select day::varchar from marts.chart_points where day >= ?",
            [HOURS.hour(0).date()]).fetchall()}
    after = times(points)
    rewritten = {name[:10] for name in after if after[name] != before.get(name)}
    assert moved <= rewritten and rewritten != {name[:10] for name in after}, written
    assert written["marts.chart_points"]["days"] == len(rewritten)


def test_a_view_day_without_rows_loses_its_file_and_new_columns_rewrite_every_day(work,
                                                                                 tmp_path):
    feeds = tmp_path / "feeds"
    publish_feeds(work, feeds)
    state = json.loads((feeds / STATE_NAME).read_text(encoding="utf-8"))
    state["marts"]["marts.card_history"]["days"]["2099-01-01"] = "1:1"  # a day that had rows
    stray = feeds / "card_history" / "2099-01-01.parquet"
    stray.write_bytes(b"")
    state["marts"]["marts.chart_points"]["columns"].append(["gone", "DATE"])  # columns changed
    (feeds / STATE_NAME).write_text(json.dumps(state), encoding="utf-8")
    written = publish_feeds(work, feeds)
    assert not stray.exists() and written["marts.card_history"]["days"] == 0
    assert written["marts.chart_points"]["from"] is None                  # every day
    assert written["marts.price_history"]["from"] == "unchanged"
    assert differences(work, feeds) == []
