"""marts.price_index: the price index, appended by pipelines/index/ after the SQL models built its
inputs (docs/price-index.md). A day's rows, once published, are never rewritten."""

from datetime import UTC, datetime

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.execution import DUCKDB_POOL, DUCKDB_TAGS
from pipelines.index import INDEX_TABLE, publish_index

INDEX_KEY = dg.AssetKey(INDEX_TABLE.split("."))
INDEX_INPUTS = ("intermediate.int_index_offer_days", "intermediate.int_index_rules")


@dg.asset(key=INDEX_KEY, deps=[dg.AssetKey(t.split(".")) for t in INDEX_INPUTS],
          group_name="marts", kinds={"duckdb"}, pool=DUCKDB_POOL, op_tags=DUCKDB_TAGS,
          description="marts.price_index: a matched-offer chained price index per card class, "
                      "market, offer kind and term, one row per closed day, with its interval, "
                      "coverage and the day's listing median; rows are appended, never "
                      "rewritten. See docs/price-index.md.")
def price_index(context: dg.AssetExecutionContext,
                duckdb: DuckDBResource) -> dg.MaterializeResult:
    with duckdb.get_connection() as con:
        report = publish_index(con, datetime.now(UTC))
        rows = con.execute(f"select count(*) from {INDEX_TABLE}").fetchone()[0]
    context.log.info(report.summary())
    return dg.MaterializeResult(metadata={"row_count": rows, "appended": report.appended,
                                          "series": report.series})


index_assets = [price_index]
