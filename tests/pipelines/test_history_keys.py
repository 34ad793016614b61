"""The history tables without primary keys: an older database loses its keys once and keeps every
row; publishing a batch twice adds nothing; the uniqueness check catches a duplicate that got in
anyway."""

from __future__ import annotations

from datetime import timedelta

import duckdb

import pipelines.defs.normalize as normalize_defs
from pipelines.defs.quality import observations_unique_per_offer_hour
from pipelines.warehouse.db import ensure_schema, keyed_history_tables
from pipelines.warehouse.sql_files import sql_text
from tests.helpers.observations import DAY, insert, obs

PUBLISH_BATCH = sql_text(normalize_defs.__file__, "publish_batch")


def _keys(con) -> set[tuple[str, str]]:
    return {tuple(r) for r in con.execute(
        "select schema_name, table_name from duckdb_constraints() "
        "where constraint_type = 'PRIMARY KEY'").fetchall()}


def test_a_fresh_database_has_no_key_on_the_history_tables(tmp_path):
    with duckdb.connect(str(tmp_path / "fresh.db")) as con:
        ensure_schema(con)
        keys = _keys(con)
    assert ("main", "observations") not in keys and ("raw", "offers") not in keys
    assert ("raw", "crawls") not in keys      # one row per source and hour grows as they do
    assert ("raw", "batch_crawls") in keys    # small tables keep theirs


def test_an_older_database_loses_its_keys_once_and_keeps_every_row(tmp_path):
    path = str(tmp_path / "old.db")
    with duckdb.connect(path) as con:
        ensure_schema(con)
        # as an older version made them: the same columns, with the keys
        for table, key in (("observations", "offer_id, observed_hour"),
                           ("raw.offers", "crawl_id, item_no")):
            con.execute(f"create table keyed as select * from {table}")
            con.execute(f"drop table {table}")
            columns = con.execute("select string_agg(column_name || ' ' || data_type, ', ' "
                                  "order by column_index) from duckdb_columns() "
                                  "where table_name = 'keyed'").fetchone()[0]
            con.execute(f"create table {table} ({columns}, primary key ({key}))")
            con.execute("drop table keyed")
        insert(con, [obs(30.0, observed_hour=DAY - timedelta(hours=h)) for h in range(5)])
        con.execute("insert into raw.offers values ('c1', 1, 'idc_x', '{}'), "
                    "('c1', 2, 'idc_x', '{}')")
        assert keyed_history_tables(con) == [("main", "observations"), ("raw", "offers")]
        before = con.execute("select * from observations order by observed_hour").fetchall()
    with duckdb.connect(path) as con:
        ensure_schema(con)
        assert keyed_history_tables(con) == []
        assert con.execute("select * from observations order by observed_hour").fetchall() \
            == before
        assert con.execute("select count(*) from raw.offers").fetchone()[0] == 2
        not_null = con.execute("select count(*) from duckdb_constraints() where table_name = "
                               "'observations' and constraint_type = 'NOT NULL'").fetchone()[0]
        assert not_null > 10                  # the definition from schema.sql, not a bare copy
        ensure_schema(con)                    # a second time: nothing left to do
        assert keyed_history_tables(con) == []


def test_publishing_the_same_batch_twice_adds_nothing(db):
    rows = [obs(30.0 + h, observed_hour=DAY - timedelta(hours=h)) for h in range(3)]
    with db.get_connection() as con:
        for _ in range(2):
            con.execute("delete from observation_batch")
            columns = ", ".join(rows[0])
            con.executemany(f"insert into observation_batch ({columns}) values "
                            f"({', '.join('?' * len(rows[0]))})",
                            [list(r.values()) for r in rows])
            con.execute(PUBLISH_BATCH)
        assert con.execute("select count(*) from observations").fetchone()[0] == 3
    assert observations_unique_per_offer_hour(duckdb=db).passed


def test_the_check_fails_on_an_offer_observed_twice_in_one_hour(db):
    with db.get_connection() as con:
        insert(con, [obs(30.0), obs(31.0, observed_hour=DAY - timedelta(hours=1))])
        assert observations_unique_per_offer_hour(duckdb=db).passed
        insert(con, [obs(30.0)])                           # the first one again
    result = observations_unique_per_offer_hour(duckdb=db)
    assert not result.passed
    [duplicate] = result.metadata["duplicates"].value
    assert duplicate["copies"] == 2
