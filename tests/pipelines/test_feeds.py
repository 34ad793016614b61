"""Feeds: CSV (UTF-8, optional BOM, ISO timestamps, stable columns) and Parquet, written
atomically."""

import json
from datetime import UTC, datetime

import duckdb
import pytest

from pipelines.defs.feeds import feed_source
from pipelines.publish import BOM, publish_feed
from pipelines.warehouse.db import ensure_schema
from tests.helpers.observations import DAY, TODAY, build, obs


@pytest.fixture
def con():
    con = duckdb.connect()
    con.execute("create schema marts")
    con.execute("""create table marts.demo as
                   select 'A100-80GB' as gpu_model, '北京' as region_group,
                   62.5::decimal(18,6) as price_per_gpu_hour_cny,
                   timestamptz '2026-11-30 09:00:00+00' as last_seen_at""")
    return con


def test_csv_and_parquet(con, tmp_path):
    written = publish_feed(con, "marts.demo", tmp_path)
    assert written["rows"] == 1
    lines = written["csv"].read_text(encoding="utf-8").splitlines()
    assert lines == ["gpu_model,region_group,price_per_gpu_hour_cny,last_seen_at",
                     "A100-80GB,北京,62.500000,2026-11-30T09:00:00Z"]
    [(model, seen)] = con.execute(
        f"select gpu_model, last_seen_at from '{written['parquet']}'").fetchall()
    assert model == "A100-80GB" and seen == datetime(2026, 11, 30, 9, tzinfo=UTC)
    assert not list(tmp_path.glob(".*.tmp"))   # no half-written leftovers


def test_bom_for_spreadsheets(con, tmp_path):
    written = publish_feed(con, "marts.demo", tmp_path, bom=True)
    raw = written["csv"].read_bytes()
    assert raw.startswith(BOM) and raw[len(BOM):].startswith(b"gpu_model,")


def test_the_latest_prices_feed_carries_each_price_s_as_of_date_and_age(tmp_path):
    """latest_prices.csv and .parquet: the mart's columns, then price_as_of and price_age_days
    (counted to the day the feed is written: the test clock's) and days_behind_record (days its
    last sighting trails its record's newest data), then source_state and
    source_stale_since (tests/query/test_source_states.py); the schema names the mart."""
    con = duckdb.connect()
    ensure_schema(con)
    build(con, [obs(62)])
    columns = [c for (c, *_) in con.execute("describe marts.latest_prices").fetchall()]
    assert feed_source(con, "marts.cheapest_offers") is None      # a mart that has them itself
    written = publish_feed(con, "marts.latest_prices", tmp_path, False,
                           feed_source(con, "marts.latest_prices"))
    header, row = written["csv"].read_text(encoding="utf-8").splitlines()
    assert header.split(",") == [*columns, "price_as_of", "price_age_days", "days_behind_record",
                                 "source_state", "source_stale_since"]
    # the newest of its record; no crawl of its source is recorded here: no state
    assert row.endswith(f",{DAY:%Y-%m-%d},{(TODAY - DAY.date()).days},0,,")
    [(as_of, age)] = con.execute(f"select price_as_of, price_age_days "
                                 f"from '{written['parquet']}'").fetchall()
    assert (as_of, age) == (DAY.date(), 1)
    schema = json.loads(written["schema"].read_text(encoding="utf-8"))
    assert schema["table"] == "marts.latest_prices"
    assert [f["name"] for f in schema["fields"]][-5:] == [
        "price_as_of", "price_age_days", "days_behind_record", "source_state",
        "source_stale_since"]


def test_a_staged_feed_syncs_no_directory_and_its_move_syncs_where_it_lands(con, tmp_path,
                                                                             monkeypatch):
    """A feed is written into a staging directory and renamed on at the publish: syncing the
    staging directory after each of its files bought nothing (the files land by a rename the
    target directory's sync makes durable) and cost a sixth of the feeds step."""
    from pipelines import publish

    synced: list = []
    monkeypatch.setattr(publish, "sync_directory", synced.append)
    staged, feeds = tmp_path / ".feeds.next", tmp_path / "feeds"
    publish_feed(con, "marts.demo", staged)
    assert synced == []
    moved = publish.move_staged(staged, feeds)
    assert sorted(p.name for p in moved) == ["demo.csv", "demo.parquet", "demo.schema.json"]
    assert synced == [feeds]
