"""The published database explains itself and holds only the user's tables: every table and
column gets a COMMENT (the models' from the SQL's own comments, the price index's from its DDL,
the advisor's from pipelines/advisor/records.py); the internal bookkeeping tables
stay in the working database only; marts.price_history is a feed like every mart."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from pipelines.advisor.records import ADVICE_COLUMNS, ADVICE_COMMENTS
from pipelines.alerts.outbox import ensure_outbox
from pipelines.defs.advisor import write_advice
from pipelines.defs.crawl_holds import record_suite_passes
from pipelines.index.publish import ensure_index_table
from pipelines.publish import publish_database
from pipelines.warehouse.comments import GLOSSARY, INTERNAL_TABLES, select_comments
from pipelines.warehouse.db import DUCKDB_CONFIG, ensure_schema
from pipelines.warehouse.sql_models import load_models, run_model
from spiders.layout import SQL_DIR
from tests.helpers.observations import EXTERNAL, build, insert, obs, set_test_clock
from tests.helpers.published import market

# tables and views (marts.price_history is a view of intermediate.int_offer_local_daily)
TABLES = ("select schema_name || '.' || table_name, comment from duckdb_tables() union all "
          "select schema_name || '.' || view_name, comment from duckdb_views() where not internal")
COLUMNS = ("select schema_name || '.' || table_name, column_name, comment from duckdb_columns() "
           "where not internal")


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("catalog")
    work = root / ".work" / "prices.db"
    work.parent.mkdir()
    with duckdb.connect(str(work), config=DUCKDB_CONFIG) as con:
        ensure_schema(con)
        con.execute("create schema if not exists alerts")
        con.execute("create table alerts.state (name varchar, value timestamptz)")
        ensure_outbox(con)
        build(con, market())
        ensure_index_table(con)                 # the tables the Python assets write
        write_advice(con, [], datetime(2026, 12, 1, tzinfo=UTC))
        record_suite_passes(con, [], datetime(2026, 12, 1, tzinfo=UTC))
        con.execute("checkpoint")
    publish_database(work, root / "prices.db")
    return work, root / "prices.db"


def _rows(path: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_internal_tables_are_not_published_but_kept_in_the_working_database(published):
    work, target = published
    published_tables = {name for name, _ in _rows(target, TABLES)}
    working_tables = {name for name, _ in _rows(work, TABLES)}
    # raw.model_contracts is written by the models step's contract checks, not run here
    assert set(INTERNAL_TABLES) - {"raw.model_contracts"} <= working_tables
    assert not set(INTERNAL_TABLES) & published_tables
    assert {"main.observations", "marts.latest_prices", "marts.price_history",
            "raw.crawls"} <= published_tables
    assert not list(target.parent.glob(".prices.db.*"))       # no temporary, no WAL left


def test_every_published_table_and_every_column_has_a_comment(published):
    _, target = published
    tables = dict(_rows(target, TABLES))
    assert {"marts.price_index", "advisor.workload_advice", "advisor.workload_advice_history",
            "alerts.outbox", "raw.crawls"} <= set(tables)
    assert not [name for name, comment in tables.items() if not comment]
    assert "open, close, low and high" in tables["marts.price_history"]
    columns = _rows(target, COLUMNS)
    missing = [(t, c) for t, c, comment in columns if not comment]
    assert not missing
    comments = {(t, c): comment for t, c, comment in columns}
    assert comments[("marts.latest_prices", "price_amount")] == "as listed, per billing_period"
    # a column without its own comment borrows the glossary's
    assert comments[("marts.latest_prices", "gpu_model")] == "canonical card, e.g. A100-80GB"
    assert comments[("main.latest_prices", "price_amount")] == "as listed, per billing_period"
    # the index's columns from the trailing comments of its DDL
    assert comments[("marts.price_index", "vendors_matched")] == "vendors behind the day's change"
    assert comments[("advisor.workload_advice", "rentals")] == ADVICE_COMMENTS["rentals"]
    # a mart's offer_id is the observations' offer, not what one pairing model calls it
    assert comments[("marts.latest_prices", "offer_id")] == GLOSSARY["offer_id"]


def test_every_advisor_column_is_described():
    assert not set(ADVICE_COLUMNS) - set(ADVICE_COMMENTS) - set(GLOSSARY)
    assert not set(ADVICE_COMMENTS) - set(ADVICE_COLUMNS)


def test_the_offer_id_comment_names_what_the_id_hashes():
    """The comment names the parts normalization hashes into offer_id (the call of offer_id()
    in pipelines/normalize/offer.py), and claims no GPU count while the id has none."""
    import ast
    import inspect

    from pipelines.normalize import offer

    [call] = [node for node in ast.walk(ast.parse(inspect.getsource(offer)))
              if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "offer_id"]
    parts = [ast.unparse(arg) for arg in call.args]
    text = GLOSSARY["offer_id"].split(" (")[0]
    named = {"source": "source", "sku": "SKU", "region": "region", "offer_kind": "offer kind",
             "period": "billing period", "gpu_model": "card", "fraction": "fraction"}
    assert len(parts) == len(named)
    for part, words in named.items():
        assert any(part in p for p in parts) and words in text
    assert not any("count" in p for p in parts) and "count" not in text


def test_the_vendor_kind_comment_lists_the_kinds_the_spiders_use():
    from spiders.registry import source_names, spider_class

    used = {spider_class(s).vendor_kind for s in source_names()}
    assert GLOSSARY["vendor_kind"] == " | ".join(sorted(used))


def test_a_second_publish_writes_no_comment_and_keeps_them(published):
    from pipelines.publish import describe_tables

    work, _ = published
    assert describe_tables(work) == 0


def test_an_hour_of_models_leaves_publishing_no_comment_to_write(published, tmp_path):
    """The hourly models rebuild their full tables in place (pipelines/warehouse/model_batch.py),
    so the comments the last publish wrote into the working database are still there."""
    from pipelines.publish import describe_tables

    work = tmp_path / "prices.db"
    shutil.copyfile(published[0], work)
    with duckdb.connect(str(work), config=DUCKDB_CONFIG) as con:
        set_test_clock(con)
        hour = con.execute("select max(observed_at) + interval 1 hour from observations"
                           ).fetchone()[0]
        insert(con, [obs("12", observed_at=hour)], crawl_id="next-hour")
        builds = [run_model(con, m) for m in load_models(SQL_DIR, EXTERNAL)]
    assert "full" in builds and any(b.startswith("incremental") for b in builds)
    assert describe_tables(work) == 0


def test_select_comments_reads_the_outermost_select_only():
    sql = ("with x as (select 1 as a -- inner\n)\n"
           "select\n    a,  -- the outer a\n    2 as b\nfrom x")
    assert select_comments(sql) == {"a": "the outer a"}


def test_price_history_is_a_feed():
    from pipelines.defs.feeds import FEED_TABLES

    assert "marts.price_history" in FEED_TABLES
