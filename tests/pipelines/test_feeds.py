"""Feeds: CSV (UTF-8, optional BOM, ISO timestamps, stable columns) and Parquet, written
atomically."""

from datetime import UTC, datetime

import duckdb
import pytest

from pipelines.publish import BOM, publish_feed


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
