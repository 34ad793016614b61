"""feeds/<mart>: every mart as CSV and Parquet for other tools; feeds/prices_db: the database
readers query. Both are published by pipelines/publish.py (a temporary file, then a rename), so
a reader holding `data/prices.db` open never blocks the pipeline, which writes
`data/.work/prices.db`."""

import os
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.execution import DUCKDB_POOL, DUCKDB_TAGS
from pipelines.defs.models import SQL_MODELS
from pipelines.index import INDEX_TABLE
from pipelines.publish import publish_database, publish_feed
from spiders.layout import db_path, feeds_dir

# Every mart is a feed: data/feeds/<mart>.csv and .parquet, columns in the model's select order.
FEED_TABLES = [m.table for m in SQL_MODELS if m.layer == "marts"] + [INDEX_TABLE]


def feed_bom() -> bool:
    return os.environ.get("GPUPRICES_FEED_BOM", "").lower() in ("1", "true", "yes")


def feed_key(table: str) -> dg.AssetKey:
    return dg.AssetKey(["feeds", table.split(".")[-1]])


def feed_spec(table: str) -> dg.AssetSpec:
    name = table.split(".")[-1]
    return dg.AssetSpec(
        key=feed_key(table), deps=[dg.AssetKey(table.split("."))], group_name="feeds",
        kinds={"csv", "parquet"},
        description=f"data/feeds/{name}.csv, .parquet and .schema.json (the CSV's column types): "
                    f"{table} (UTF-8, header row, ISO 8601 UTC timestamps, text cells safe for "
                    "spreadsheets; GPUPRICES_FEED_BOM=1 adds a BOM).")


# Every feed is its own asset, all written by one step on one connection (a step per feed cost
# a DuckDB open and Dagster's per-step bookkeeping, ten times the writing of a small feed).
@dg.multi_asset(name="mart_feeds", specs=[feed_spec(t) for t in FEED_TABLES], can_subset=True,
                pool=DUCKDB_POOL, op_tags=DUCKDB_TAGS, description="Every mart written as a feed.")
def mart_feeds(context: dg.AssetExecutionContext,
               duckdb: DuckDBResource) -> Iterator[dg.MaterializeResult]:
    selected = context.selected_asset_keys
    with duckdb.get_connection() as con:
        for table in FEED_TABLES:
            key = feed_key(table)
            if key in selected:
                written = publish_feed(con, table, feeds_dir(), feed_bom())
                yield dg.MaterializeResult(asset_key=key,
                                           metadata={"path": str(written["csv"]),
                                                     "row_count": written["rows"]})


# Published last: after every model, every feed and the advisor have written the working database.
@dg.asset(key=["feeds", "prices_db"],
          deps=[*(dg.AssetKey([m.layer, m.name]) for m in SQL_MODELS),
                *(feed_key(t) for t in FEED_TABLES), dg.AssetKey(["advisor", "workload_advice"])],
          group_name="feeds", kinds={"duckdb"}, pool=DUCKDB_POOL, op_tags=DUCKDB_TAGS,
          description="data/prices.db: a consistent copy of the working database, published by "
                      "rename after every successful run, for `duckdb -readonly data/prices.db` "
                      "and other readers (a stale prices.db.wal beside it is removed). A run whose "
                      "checks failed does not replace it.")
def published_prices_db(duckdb: DuckDBResource) -> dg.MaterializeResult:
    with duckdb.get_connection() as con:
        con.execute("checkpoint")   # everything in the main file, nothing left in the WAL
    size = publish_database(Path(duckdb.database), db_path())
    return dg.MaterializeResult(metadata={"path": str(db_path()), "bytes": size})
