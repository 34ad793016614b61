"""CSV feeds for other tools and the database readers query, each published atomically (write a
temporary file, then rename it over the old one): a reader never sees half a file, and a reader
holding `data/prices.db` open never blocks the pipeline, which writes `data/.work/prices.db`.
"""


import os
import shutil
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.models import model_assets
from pipelines.paths import data_dir, db_path

FEEDS = {"latest_prices": "marts.latest_prices"}


def publish_csv(con, table: str, target: Path) -> int:
    """COPY `table` to `target` via a temporary file and a rename: readers never see half a file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    con.execute("set TimeZone = 'UTC'")  # timestamps are written as ISO 8601 UTC: 2026-11-30T09:00:00Z
    con.execute(f"copy (select * from {table}) to '{tmp}' "
                "(header, delimiter ',', timestampformat '%Y-%m-%dT%H:%M:%SZ')")
    os.replace(tmp, target)
    return con.execute(f"select count(*) from {table}").fetchone()[0]


def build_feed_asset(feed: str, table: str) -> dg.AssetsDefinition:
    @dg.asset(key=["feeds", f"{feed}_csv"], deps=[dg.AssetKey(table.split("."))],
              group_name="feeds", kinds={"csv"},
              description=f"data/feeds/{feed}.csv: {table}, UTF-8, header row, ISO timestamps.")
    def feed_asset(duckdb: DuckDBResource) -> dg.MaterializeResult:
        target = data_dir() / "feeds" / f"{feed}.csv"
        with duckdb.get_connection() as con:
            rows = publish_csv(con, table, target)
        return dg.MaterializeResult(metadata={"path": str(target), "row_count": rows})

    return feed_asset


feed_assets = [build_feed_asset(f, t) for f, t in FEEDS.items()]


def publish_database(duckdb: DuckDBResource, target: Path) -> int:
    """Checkpoint the working database and publish a copy of it as `target` by rename."""
    with duckdb.get_connection() as con:
        con.execute("checkpoint")   # everything in the main file, nothing left in the WAL
    work = Path(duckdb.database)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    shutil.copyfile(work, tmp)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, target)  # readers holding the old file keep reading it, undisturbed
    return target.stat().st_size


@dg.asset(key=["serve", "prices_db"],
          deps=[a.key for a in (*model_assets, *feed_assets)],
          group_name="feeds", kinds={"duckdb"},
          description="data/prices.db: a consistent copy of the working database, published by "
                      "rename after every successful run, for `duckdb data/prices.db` and other "
                      "readers. A run whose checks failed does not replace it.")
def published_prices_db(duckdb: DuckDBResource) -> dg.MaterializeResult:
    size = publish_database(duckdb, db_path())
    return dg.MaterializeResult(metadata={"path": str(db_path()), "bytes": size})
