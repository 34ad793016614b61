"""feeds/<mart>: every mart as CSV and Parquet for other tools; feeds/prices_db: the database
readers query. Both are published by pipelines/publish.py (a temporary file or the generation
readers do not hold, then a rename), so
a reader holding `data/prices.db` open never blocks the pipeline, which writes
`data/.work/prices.db`.

The feeds step writes into a staging directory (data/.feeds.next); the publish step moves them
into data/feeds/ right before it renames the new prices.db into place, once the database's copy
is whole. So the feeds and the database are published together: a run whose feeds or database
could not be written leaves both as they were, never new feeds beside an old database.

The publish depends on what it publishes only (the models and the feeds), not on the report,
the alerts or the advisor: one of those failing does not hold the prices back. It runs after
them when they can run (the lowest priority among the steps ready together, and in process a
step that starts only once no other step runs: pipelines/defs/step_overlap.py), so the tables
the advisor and the alerts write reach this run's copy when they succeeded. A run that crawled and
landed no source publishes nothing (`nothing_landed`): the database, the feeds and the report
stay those of the last run that landed one."""

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.execution import DUCKDB_POOL, DUCKDB_TAGS, OVERLAP_TAGS
from pipelines.defs.models import SQL_MODELS
from pipelines.feed_days import dated_marts, write_feeds
from pipelines.index import INDEX_TABLE
from pipelines.publish import (
    move_staged,
    publish_generation,
    refuse_unless_writable_dir,
    staging_dir,
)
from pipelines.query.prices import aged_latest_prices_sql
from pipelines.resources import release_working_database
from pipelines.warehouse.price_age import use_price_ages
from spiders.layout import db_path, feeds_dir

# Every mart is a feed: data/feeds/<mart>.csv and .parquet, columns in the model's select order
# (latest_prices then each price's as-of date and age: feed_source).
FEED_TABLES = [m.table for m in SQL_MODELS if m.layer == "marts"] + [INDEX_TABLE]


def feed_source(con, table: str) -> str | None:
    """What a feed is read from when it carries more than its mart: the latest prices with each
    price's as-of date and age, counted to the day the feed is written (a temporary view of
    pipelines/query/sql/aged_latest_prices.sql); None: the mart itself."""
    if table != "marts.latest_prices":
        return None
    use_price_ages(con)
    con.execute(f"create or replace temp view aged_latest_prices as {aged_latest_prices_sql()}")
    return "temp.aged_latest_prices"


def feed_bom() -> bool:
    return os.environ.get("GPUPRICES_FEED_BOM", "").lower() in ("1", "true", "yes")


# Among the steps ready at the same moment, the publish goes last (Dagster runs a higher
# `dagster/priority` first; the default is 0).
PUBLISH_TAGS = {**(DUCKDB_TAGS or {}), "dagster/priority": "-10"}


def nothing_landed(con, run_id: str) -> bool:
    """Whether run `run_id` crawled sources and none of them passed: then nothing new was
    collected and nothing is republished (a run that crawled nothing, such as the report job,
    is not such a run)."""
    crawled, passed = con.execute(
        "select count(*), count(*) filter (where passed) from raw.crawls where run_id = ?",
        [run_id]).fetchone()
    return crawled > 0 and passed == 0


def feed_key(table: str) -> dg.AssetKey:
    return dg.AssetKey(["feeds", table.split(".")[-1]])


def feed_spec(table: str) -> dg.AssetSpec:
    name = table.split(".")[-1]
    return dg.AssetSpec(
        key=feed_key(table), deps=[dg.AssetKey(table.split("."))], group_name="feeds",
        kinds={"csv", "parquet"},
        description=(f"data/feeds/{name}/<day>.csv and .parquet, a file a day, only the days "
                     "that changed written" if table in dated_marts() else
                     f"data/feeds/{name}.csv and .parquet")
                    + f", and {name}.schema.json (the CSV's column types): "
                    f"{table} (UTF-8, header row, ISO 8601 UTC timestamps, text cells safe for "
                    "spreadsheets; GPUPRICES_FEED_BOM=1 adds a BOM).")


# Every feed is its own asset, all written by one step on one connection (a step per feed cost
# a DuckDB open and Dagster's per-step bookkeeping, ten times the writing of a small feed).
@dg.multi_asset(name="mart_feeds", specs=[feed_spec(t) for t in FEED_TABLES], can_subset=True,
                pool=DUCKDB_POOL, op_tags=OVERLAP_TAGS, description="Every mart written as a feed.")
def mart_feeds(context: dg.AssetExecutionContext,
               duckdb: DuckDBResource) -> Iterator[dg.MaterializeResult]:
    selected = context.selected_asset_keys
    # a feeds directory that is a file, or read-only, fails this step, naming it, before a feed
    # is written (and so before the publish, which then does not run)
    refuse_unless_writable_dir(feeds_dir())
    staged = staging_dir(feeds_dir())
    shutil.rmtree(staged, ignore_errors=True)     # what a failed or skipped run left staged
    with duckdb.get_connection() as con:
        tables = [t for t in FEED_TABLES if feed_key(t) in selected]
        for table, written in write_feeds(con, tables, staged, feeds_dir(), feed_bom(),
                                          feed_source):
            metadata = {"path": str(feeds_dir() / written["csv"].name),
                        "row_count": written["rows"]}
            if "days" in written:   # a dated feed: the days this run wrote, from which day
                metadata |= {"days_written": written["days"],
                             "written_from": written["from"] or "every day"}
            yield dg.MaterializeResult(asset_key=feed_key(table), metadata=metadata)


# Published after every model and every feed; after the advisor and the alerts when they run.
@dg.asset(key=["feeds", "prices_db"],
          deps=[*(dg.AssetKey([m.layer, m.name]) for m in SQL_MODELS),
                *(feed_key(t) for t in FEED_TABLES)],
          group_name="feeds", kinds={"duckdb"}, pool=DUCKDB_POOL, op_tags=PUBLISH_TAGS,
          output_required=False,
          description="data/prices.db: a consistent copy of the working database (the one of "
                      "two generations in data/.published/ brought up to date with what changed, "
                      "or copied whole), switched by rename with the staged feeds, for "
                      "`duckdb -readonly data/prices.db` "
                      "and other readers (a stale prices.db.wal beside it is removed). A run whose "
                      "models, feeds or blocking checks failed, or that landed no source, does "
                      "not replace it; a failed report, alert or advice step does not stop it.")
def published_prices_db(context: dg.AssetExecutionContext,
                        duckdb: DuckDBResource) -> Iterator[dg.MaterializeResult]:
    staged = staging_dir(feeds_dir())
    with duckdb.get_connection() as con:
        if nothing_landed(con, context.run_id):
            context.log.warning("no source landed this run: prices.db and the feeds are left as "
                                "they were")
            skip = True
        else:
            con.execute("checkpoint")   # everything in the main file, nothing left in the WAL
            skip = False
    if skip:
        shutil.rmtree(staged, ignore_errors=True)
        return
    moved: list[Path] = []

    def move_feeds() -> None:
        moved.extend(move_staged(staged, feeds_dir()))
    release_working_database()   # the publish reads the file closed
    try:
        published = publish_generation(Path(duckdb.database), db_path(), before_rename=move_feeds)
    finally:   # published or not, nothing stays staged (on a full disk it is room needed)
        shutil.rmtree(staged, ignore_errors=True)
    if published["why"]:
        context.log.info(f"prices.db copied whole: {published['why']}")
    yield dg.MaterializeResult(metadata={"path": str(db_path()), "bytes": published["bytes"],
                                         "method": published["method"],
                                         "feed_files": len(moved)})
