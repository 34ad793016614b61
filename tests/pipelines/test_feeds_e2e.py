"""End to end, on the session's `gpuprices run` over the snapshots (tests/conftest.py): the
published feeds open typed in pandas, the summary names the report and the alerts, and vast.ai's
"<state>, US" hosts are placed in their state."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.helpers.runs import query


@pytest.fixture(scope="module")
def run(snapshot_run):
    assert snapshot_run.returncode == 0, snapshot_run.stdout + snapshot_run.stderr
    return snapshot_run


def test_every_feed_opens_typed_in_pandas(run):
    feeds = run.data_dir / "feeds"
    parquets = sorted(feeds.rglob("*.parquet"))
    assert any(p.parent != feeds for p in parquets)       # dated feeds: a file a day
    for parquet in parquets:
        from_parquet = pd.read_parquet(parquet, dtype_backend="numpy_nullable")
        mart = parquet.parent.name if parquet.parent != feeds else parquet.stem
        schema = json.loads((feeds / f"{mart}.schema.json").read_text(encoding="utf-8"))
        from_csv = pd.read_csv(parquet.with_suffix(".csv"), **schema["pandas_read_csv"])
        assert list(from_csv.columns) == list(from_parquet.columns), parquet.name
        assert len(from_csv) == len(from_parquet), parquet.name


def test_every_mart_is_a_feed_as_published(run):
    """Each mart's feed holds the published table's rows: one file, or its days' files together
    (pipelines/feed_days.py), each day's file holding that day's rows only."""
    from pipelines.defs.feeds import FEED_TABLES
    from pipelines.feed_days import dated_marts

    feeds = run.data_dir / "feeds"
    for table in FEED_TABLES:
        name = table.split(".")[-1]
        published = query(run.data_dir, f"select count(*) from {table}")[0][0]
        if table in dated_marts() and (feeds / name).is_dir():
            schema = json.loads((feeds / f"{name}.schema.json").read_text(encoding="utf-8"))
            column = schema["partitioned_by"]
            days = sorted((feeds / name).glob("*.parquet"))
            assert not (feeds / f"{name}.csv").exists(), name
            held = query(run.data_dir, f"select count(*), count(distinct {column}) from {table}")
            assert held[0] == (published, len(days)), name
            for day in days:
                frame = pd.read_parquet(day)
                assert set(frame[column].astype(str)) == {day.stem}, day
            assert sum(len(pd.read_parquet(day)) for day in days) == published, name
        else:
            assert len(pd.read_parquet(feeds / f"{name}.parquet")) == published, name


def test_summary_names_the_report_and_the_alerts(run):
    assert f"report: {run.data_dir / 'report' / 'index.html'}" in run.stdout.replace("\n", "")
    assert "alerts: " in run.stdout


def test_vastai_us_hosts_have_their_state(run):
    rows = query(run.data_dir, "select region_code, province_or_state from marts.latest_prices "
                               "where source = 'vastai' and country = 'US' "
                               "and region_code like '%, us'")
    assert ("texas, us", "Texas") in rows
    # a state for every host but the one that names only its country
    assert all(state for code, state in rows if code != "united states, us"), rows
