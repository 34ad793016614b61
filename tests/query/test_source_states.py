"""Every latest price says whether its source is still being refreshed (issue 39, item 4): the
last good prices of a source whose latest crawl failed, is held, or that no crawl refreshed
within FRESHNESS_HOURS of the newest crawl stay published, marked with source_state and
source_stale_since, in `gpuprices prices` (table, csv, json), the API and the latest_prices
feed; a fresh source's are not marked, an archive's are 'archive'."""

from __future__ import annotations

from datetime import timedelta

import duckdb
import pytest

from pipelines import api
from pipelines.defs.feeds import feed_source
from pipelines.publish import publish_feed
from pipelines.quality.thresholds import FRESHNESS_HOURS
from tests.helpers.published import (
    ALIBABA,
    AUTODL,
    AZURE,
    NANJING,
    SEEN,
    SINNET,
    ULANQAB,
    as_json,
    gpuprices,
    market,
    publish,
)

HOUR = timedelta(hours=1)
LONG_AGO = SEEN - timedelta(hours=FRESHNESS_HOURS + 1)
# (crawl_id, source, mode, finished_at, passed, status, published): the newest crawl is SEEN's
CRAWLS = [
    ("sinnet-1", SINNET[0], "replay", SEEN, True, "passed", True),               # fresh
    ("autodl-1", AUTODL[0], "live", SEEN - HOUR, True, "passed", True),          # fresh
    ("alibaba-1", ALIBABA[0], "live", SEEN - 2 * HOUR, True, "passed", True),
    ("alibaba-2", ALIBABA[0], "live", SEEN, False, "failed", False),             # failed
    ("ulanqab-1", ULANQAB[0], "live", SEEN - HOUR, True, "passed", True),
    ("ulanqab-2", ULANQAB[0], "live", SEEN, True, "held", False),                # held
    ("azure-1", AZURE[0], "live", LONG_AGO, True, "passed", True),               # stale
    ("nanjing-1", NANJING[0], "archive", SEEN - 90 * 24 * HOUR, True, "passed", True),
    ("never-1", "idc_never", "live", SEEN, False, "failed", False),              # never landed
]
# vastai (the hostile vendor of market()) has no crawl recorded: no state


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    root = publish(tmp_path_factory.mktemp("stale") / "data", market())
    with duckdb.connect(str(root / "prices.db")) as con:
        con.executemany(
            "insert into raw.crawls (crawl_id, source, mode, started_at, finished_at, passed, "
            "status, offers, normalized_at) values (?, ?, ?, ?, ?, ?, ?, 1, ?)",
            [(crawl_id, source, mode, at - HOUR / 6, at, passed, status, at if landed else None)
             for crawl_id, source, mode, at, passed, status, landed in CRAWLS])
    return root


def _states(rows) -> dict[str, tuple]:
    return {r["source"]: (r["source_state"], r["source_stale_since"]) for r in rows}


def test_each_source_s_prices_stay_published_and_say_its_state(data_dir):
    rows = as_json(data_dir, "--max-age", "all")
    states = _states(rows)
    assert {s: state for s, (state, _) in states.items()} == {
        "idc_sinnet_bj": "fresh", "autodl_cn": "fresh", "alibaba_cn": "failed",
        "idc_ulanqab": "held", "azure": "stale", "idc_nanjing": "archive", "vastai": None}
    # since when: the finish of the source's last passing, published crawl; null when fresh
    assert states["alibaba_cn"][1].startswith(f"{SEEN - 2 * HOUR:%Y-%m-%dT%H:%M}")
    assert states["idc_ulanqab"][1].startswith(f"{SEEN - HOUR:%Y-%m-%dT%H:%M}")
    assert states["azure"][1].startswith(f"{LONG_AGO:%Y-%m-%dT%H:%M}")
    assert states["idc_sinnet_bj"][1] is None and states["idc_nanjing"][1] is None
    # the failed and held sources' rows are all still there; a source that never landed has none
    assert sum(r["source"] == "alibaba_cn" for r in rows) == 2
    assert sum(r["source"] == "idc_ulanqab" for r in rows) == 2
    assert "idc_never" not in states
    assert len(rows) == len(market())


@pytest.mark.parametrize(("vendor", "mark"), [("alibaba", "alibaba_cn FAILED since"),
                                             ("ulanqab", "idc_ulanqab HELD since"),
                                             ("azure", "azure STALE since")])
def test_the_table_marks_the_prices_of_a_source_not_refreshed(data_dir, vendor, mark):
    result = gpuprices(data_dir, "prices", "--max-age", "all", "--vendor", vendor,
                       "--format", "table")
    assert result.exit_code == 0, result.output
    words = result.output.split()
    assert words.count(mark.split()[1]) >= 2       # in every row's cell, and in the note
    assert mark in " ".join(words)


@pytest.mark.parametrize("vendor", ["sinnet", "nanjing", "vast"])
def test_a_fresh_an_archive_or_an_unknown_source_is_not_marked(data_dir, vendor):
    result = gpuprices(data_dir, "prices", "--max-age", "all", "--vendor", vendor,
                       "--format", "table")
    assert result.exit_code == 0, result.output
    assert not {"FAILED", "HELD", "STALE", "refreshed:"} & set(result.output.split())


def test_csv_and_the_api_carry_the_state(data_dir):
    csv = gpuprices(data_dir, "prices", "--max-age", "all", "--format", "csv").stdout
    assert csv.splitlines()[0].split(",")[-2:] == ["source_state", "source_stale_since"]
    frame = api.prices(data_dir=data_dir, max_age="all")
    assert dict(zip(frame["source"], frame["source_state"], strict=True))["azure"] == "stale"


def test_the_latest_prices_feed_ends_with_the_state(data_dir, tmp_path):
    with duckdb.connect(str(data_dir / "prices.db"), read_only=True) as con:
        written = publish_feed(con, "marts.latest_prices", tmp_path, False,
                               feed_source(con, "marts.latest_prices"))
        states = dict(con.execute(f"select distinct source, source_state "
                                  f"from '{written['parquet']}'").fetchall())
    assert written["csv"].read_text(encoding="utf-8").splitlines()[0].split(",")[-5:] == [
        "price_as_of", "price_age_days", "days_behind_record", "source_state",
        "source_stale_since"]
    assert states["idc_ulanqab"] == "held" and states["idc_sinnet_bj"] == "fresh"
