"""Normalization marks exactly the crawls it read, and the quarantine tells the truth.

observation_batch records the crawls it read (raw.batch_crawls); observations publishes their rows
and marks exactly those crawls normalized, so a crawl loaded in between (an overlapping run)
stays pending. Two crawls of the same hour (a crash, an overlap) are not a "dedupe" problem: the
earlier crawl's row is kept. A replayed crawl (the same captured bytes) adds no quarantine rows.
"""

import json

import dagster as dg
import duckdb
import pandas as pd
import pytest
from dagster_duckdb import DuckDBResource

from pipelines.cli import run as run_module
from pipelines.defs.normalize import observation_batch, observations
from pipelines.normalize.batch import normalize_each, normalize_pending
from pipelines.warehouse.db import ensure_schema
from pipelines.warehouse.sql_files import sql_text

ITEM = {"source": "idc_x", "vendor": "X IDC", "vendor_kind": "idc", "region_text": "北京",
        "offer_kind": "on_demand", "available": True, "url": "https://idc.test/price",
        "raw_ref": "0" * 64, "billing_period": "hour", "gpu_count": "1"}
GOOD = {**ITEM, "sku": "a100 | 1", "gpu_text": "NVIDIA A100 80G", "price_text": "¥62.00/时"}
NEGOTIABLE = {**ITEM, "sku": "h800 | 1", "gpu_text": "H800 80G", "price_text": "面议"}
HOUR_9, HOUR_10 = "2026-11-30T09:00:00Z", "2026-11-30T10:00:00Z"


def load_crawl(db: DuckDBResource, crawl_id: str, items: list[dict], observed_at: str = HOUR_9,
               run_id: str | None = None) -> None:
    """A passing crawl of idc_x as ingest loads it: its raw.crawls row and its raw offers."""
    with db.get_connection() as con:
        con.execute("insert into raw.crawls (crawl_id, run_id, source, mode, passed, status, "
                    "offers) values (?, ?, 'idc_x', 'replay', true, 'passed', ?)",
                    [crawl_id, run_id, len(items)])
        for n, item in enumerate(items):
            con.execute("insert into raw.offers values (?, ?, 'idc_x', ?)",
                        [crawl_id, n, json.dumps({**item, "observed_at": observed_at},
                                                 ensure_ascii=False)])


def build_batch(db: DuckDBResource) -> None:
    assert dg.materialize([observation_batch], resources={"duckdb": db}).success


def publish(db: DuckDBResource) -> None:
    assert dg.materialize([observations], resources={"duckdb": db}).success


def rows(db: DuckDBResource, sql: str) -> list[tuple]:
    with duckdb.connect(db.database, read_only=True) as con:
        return con.execute(sql).fetchall()


CRAWLS = "select crawl_id, normalized_at is not null, normalized_rows, quarantined_rows " \
         "from raw.crawls order by 1"
FIRST_DAYS = "select crawl_id, first_day::varchar from raw.crawl_first_days order by 1"


def test_a_crawl_loaded_after_the_batch_was_built_stays_pending(db):
    load_crawl(db, "c1", [GOOD])
    build_batch(db)
    load_crawl(db, "c2", [GOOD], observed_at=HOUR_10)     # the overlapping run's load
    publish(db)
    assert rows(db, CRAWLS) == [("c1", True, 1, 0), ("c2", False, None, None)]
    assert rows(db, "select crawl_id from observations") == [("c1",)]
    assert rows(db, "select count(*) from raw.batch_crawls") == [(0,)]
    # the published crawl's first day is recorded as it lands (the model runner scans nothing)
    assert rows(db, FIRST_DAYS) == [("c1", "2026-11-30")]
    build_batch(db)                                        # the next run takes it
    publish(db)
    assert rows(db, CRAWLS) == [("c1", True, 1, 0), ("c2", True, 1, 0)]
    assert rows(db, FIRST_DAYS) == [("c1", "2026-11-30"), ("c2", "2026-11-30")]
    assert rows(db, "select crawl_id, observed_hour::varchar from observations order by 1") == [
        ("c1", "2026-11-30 09:00:00+00"), ("c2", "2026-11-30 10:00:00+00")]


def test_a_passing_crawl_without_offers_is_marked_with_zero_rows(db):
    load_crawl(db, "c1", [])
    build_batch(db)
    publish(db)
    assert rows(db, CRAWLS) == [("c1", True, 0, 0)]
    assert rows(db, FIRST_DAYS) == [("c1", None)]              # recorded: no day to find


def test_two_crawls_of_the_same_hour_are_not_dedupe(db):
    load_crawl(db, "c1", [GOOD, NEGOTIABLE])     # a killed run's crawl, still pending
    load_crawl(db, "c2", [GOOD, NEGOTIABLE])     # the next run crawls the same hour again
    build_batch(db)
    publish(db)
    assert rows(db, "select crawl_id from observations") == [("c1",)]   # the first crawl's row
    assert rows(db, "select crawl_id, stage from quarantine") == [("c1", "price")]
    # each crawl says what became of its offers: one observation, one refused
    assert rows(db, CRAWLS) == [("c1", True, 1, 1), ("c2", True, 1, 1)]


def test_an_offer_twice_in_one_crawl_is_still_dedupe(db):
    load_crawl(db, "c1", [GOOD, GOOD])
    build_batch(db)
    publish(db)
    assert rows(db, "select item_no, stage from quarantine") == [(1, "dedupe")]
    assert rows(db, CRAWLS) == [("c1", True, 1, 1)]


def test_a_replayed_crawl_adds_no_quarantine_rows(db):
    load_crawl(db, "c1", [GOOD, NEGOTIABLE], run_id="r1")
    build_batch(db)
    publish(db)
    before = rows(db, "select * from quarantine")
    load_crawl(db, "c2", [GOOD, NEGOTIABLE], run_id="r2")     # the same captured bytes again
    build_batch(db)
    publish(db)
    assert rows(db, "select * from quarantine") == before and len(before) == 1
    assert rows(db, CRAWLS)[1] == ("c2", True, 1, 1)
    # the replay's summary still says why its offer was refused, once
    with duckdb.connect(db.database, read_only=True) as con:
        reasons = con.execute(sql_text(run_module.__file__, "run_quarantine_reasons"),
                              {"run_id": "r2"}).fetchall()
    [(source, stage, reason, count)] = reasons
    assert (source, stage, count) == ("idc_x", "price", 1) and "面议" in reason


def test_the_same_problem_an_hour_later_is_a_new_row(db):
    load_crawl(db, "c1", [NEGOTIABLE])
    load_crawl(db, "c2", [NEGOTIABLE], observed_at=HOUR_10)
    build_batch(db)
    publish(db)
    assert rows(db, "select crawl_id from quarantine order by 1") == [("c1",), ("c2",)]


def test_an_older_database_gets_the_item_hash_and_its_repeats_are_kept(tmp_path):
    path = str(tmp_path / "old.db")
    raw = json.dumps({**NEGOTIABLE, "observed_at": HOUR_9}, ensure_ascii=False)
    with duckdb.connect(path) as con:      # quarantine as an older version made it
        con.execute("create table quarantine (source varchar not null, crawl_id varchar not null,"
                    " item_no integer not null, stage varchar not null, reason varchar not null, "
                    "raw_item json not null, quarantined_at timestamptz not null, "
                    "primary key (crawl_id, item_no))")
        for crawl_id in ("old1", "old2"):     # one row per replay, as it used to be
            con.execute("insert into quarantine values ('idc_x', ?, 0, 'price', 'x', ?, now())",
                        [crawl_id, raw])
    db = DuckDBResource(database=path)
    with db.get_connection() as con:
        ensure_schema(con)
        ensure_schema(con)                    # idempotent
    assert rows(db, "select count(*), count(distinct raw_item_sha256) from quarantine "
                    "where raw_item_sha256 is not null") == [(2, 1)]
    load_crawl(db, "c3", [NEGOTIABLE])        # replayed again: nothing new
    build_batch(db)
    assert rows(db, "select count(*) from quarantine") == [(2,)]


def test_a_recrawled_copy_of_an_inconsistent_row_is_refused_with_it():
    # a cheap H800 three ways, and a server misread as one card: in two crawls of one hour
    base = {**ITEM, "gpu_text": "H800 80G SXM5 单卡", "observed_at": HOUR_9}
    items = [{**base, "sku": "hour", "price_text": "¥12/时"},
             {**base, "sku": "day", "price_text": "¥288/天", "billing_period": "day"},
             {**base, "sku": "month", "price_text": "¥8760/月", "billing_period": "month"},
             {**base, "sku": "server", "gpu_text": "H800 80G SXM5 整机", "price_text": "¥90/时"}]
    pending = [(crawl, n, "idc_x", json.dumps(item)) for crawl in ("c1", "c2")
               for n, item in enumerate(items)]
    batch, quarantined = normalize_pending(pending)
    assert sorted(batch["sku"]) == ["day", "hour", "month"] and set(batch["crawl_id"]) == {"c1"}
    assert [(q["crawl_id"], q["item_no"], q["stage"]) for q in quarantined] == [
        ("c1", 3, "consistency"), ("c2", 3, "consistency")]


def _recrawled_hour() -> list[tuple]:
    """Two crawls of one hour: a consistent offer, a misread server, a repeat within the crawl
    and an offer that cannot be priced; the second crawl repeats the first."""
    base = {**ITEM, "gpu_text": "H800 80G SXM5 单卡", "observed_at": HOUR_9}
    items = [{**base, "sku": "hour", "price_text": "¥12/时"},
             {**base, "sku": "day", "price_text": "¥288/天", "billing_period": "day"},
             {**base, "sku": "month", "price_text": "¥8760/月", "billing_period": "month"},
             {**base, "sku": "server", "gpu_text": "H800 80G SXM5 整机", "price_text": "¥90/时"},
             {**base, "sku": "hour", "price_text": "¥12/时"},
             NEGOTIABLE]
    return [(crawl, n, "idc_x", json.dumps(item)) for crawl in ("c1", "c2")
            for n, item in enumerate(items)]


@pytest.mark.parametrize("crawls", [("c1", "c2"), ("c1",), ("c2",), ()])
def test_offers_normalized_once_make_the_same_batch(crawls):
    # land_or_hold normalizes each offer once (normalize_each) and batches subsets of them:
    # every subset's batch and refusals are what normalizing it afresh makes
    pending = _recrawled_hour()
    each = normalize_each(pending)
    subset = [offer for offer in pending if offer[0] in crawls]
    batch, quarantined = normalize_pending(subset, each)
    fresh_batch, fresh_quarantined = normalize_pending(subset)
    pd.testing.assert_frame_equal(batch, fresh_batch)
    assert _without_time(quarantined) == _without_time(fresh_quarantined)
    # the earlier crawl's rows, once
    assert sorted(batch.get("sku", [])) == (["day", "hour", "month"] if crawls else [])
    assert sorted((q["crawl_id"], q["item_no"], q["stage"]) for q in quarantined) == [
        (crawl, n, stage) for crawl in crawls
        for n, stage in ((3, "consistency"), (4, "dedupe"), (5, "price"))]


def _without_time(quarantined: list[dict]) -> list[dict]:
    return [{k: v for k, v in q.items() if k != "quarantined_at"} for q in quarantined]
