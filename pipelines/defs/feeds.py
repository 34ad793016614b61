"""Feeds (CSV and Parquet) for other tools and the database readers query, each published atomically (write a
temporary file, then rename it over the old one): a reader never sees half a file, and a reader
holding `data/prices.db` open never blocks the pipeline, which writes `data/.work/prices.db`.
"""


import os
import shutil
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.models import SQL_MODELS, model_assets
from spiders.layout import data_dir, db_path

# Every mart is a feed: data/feeds/<mart>.csv and .parquet, columns in the model's select order.
FEED_TABLES = [m.table for m in SQL_MODELS if m.layer == "marts"]
BOM = "\ufeff".encode()


def _atomic(target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    return target.with_name(f".{target.name}.{os.getpid()}.tmp")


def publish_feed(con, table: str, out_dir: Path, bom: bool = False) -> dict:
    """Write `table` as CSV (UTF-8, header, ISO 8601 UTC timestamps; a BOM for spreadsheet users
    on request) and Parquet, each to a temporary file renamed into place: readers never see half a
    file. Returns {"rows": n, "csv": path, "parquet": path}."""
    name = table.split(".")[-1]
    csv_path, parquet_path = out_dir / f"{name}.csv", out_dir / f"{name}.parquet"
    con.execute("set TimeZone = 'UTC'")  # timestamps are written as ISO 8601 UTC: 2026-11-30T09:00:00Z
    tmp = _atomic(csv_path)
    con.execute(f"copy (select * from {table}) to '{tmp}' "
                "(header, delimiter ',', timestampformat '%Y-%m-%dT%H:%M:%SZ')")
    if bom:
        tmp.write_bytes(BOM + tmp.read_bytes())
    os.replace(tmp, csv_path)
    tmp = _atomic(parquet_path)
    con.execute(f"copy (select * from {table}) to '{tmp}' (format parquet)")
    os.replace(tmp, parquet_path)
    rows = con.execute(f"select count(*) from {table}").fetchone()[0]
    return {"rows": rows, "csv": csv_path, "parquet": parquet_path}


def feed_bom() -> bool:
    return os.environ.get("GPUPRICES_FEED_BOM", "").lower() in ("1", "true", "yes")


def build_feed_asset(table: str) -> dg.AssetsDefinition:
    name = table.split(".")[-1]

    @dg.asset(key=["feeds", name], deps=[dg.AssetKey(table.split("."))],
              group_name="feeds", kinds={"csv", "parquet"},
              description=f"data/feeds/{name}.csv and .parquet: {table} (UTF-8, header row, "
                          "ISO 8601 UTC timestamps; GPUPRICES_FEED_BOM=1 adds a BOM).")
    def feed_asset(duckdb: DuckDBResource) -> dg.MaterializeResult:
        with duckdb.get_connection() as con:
            written = publish_feed(con, table, data_dir() / "feeds", feed_bom())
        return dg.MaterializeResult(metadata={"path": str(written["csv"]), "row_count": written["rows"]})

    return feed_asset


feed_assets = [build_feed_asset(t) for t in FEED_TABLES]


def publish_database(duckdb: DuckDBResource, target: Path) -> int:
    """Checkpoint the working database and publish a copy of it as `target` by rename."""
    with duckdb.get_connection() as con:
        con.execute("checkpoint")   # everything in the main file, nothing left in the WAL
    work = Path(duckdb.database)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    for stale in target.parent.glob(f".{target.name}.*.tmp"):   # left by a run killed mid-copy
        stale.unlink(missing_ok=True)
    shutil.copyfile(work, tmp)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, target)  # readers holding the old file keep reading it, undisturbed
    return target.stat().st_size


@dg.asset(key=["serve", "prices_db"],
          deps=[*(a.key for a in (*model_assets, *feed_assets)),
                dg.AssetKey(["advisor", "workload_advice"])],
          group_name="feeds", kinds={"duckdb"},
          description="data/prices.db: a consistent copy of the working database, published by "
                      "rename after every successful run, for `duckdb data/prices.db` and other "
                      "readers. A run whose checks failed does not replace it.")
def published_prices_db(duckdb: DuckDBResource) -> dg.MaterializeResult:
    size = publish_database(duckdb, db_path())
    return dg.MaterializeResult(metadata={"path": str(db_path()), "bytes": size})
