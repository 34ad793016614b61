"""CSV feeds for other tools, published atomically (write, then rename)."""


import os
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.paths import data_dir

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
