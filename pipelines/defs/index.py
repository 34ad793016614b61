"""marts.price_index: the price index, appended by pipelines/index/ after the SQL models built its
inputs (docs/price-index.md). A day's rows, once published, are never rewritten. Its grain and
audits (the header of pipelines/index/sql/create_price_index.sql) are a blocking check run after
each publication, as the SQL models' are: a failure stops the feeds and the publish."""

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.execution import DUCKDB_POOL, OVERLAP_TAGS
from pipelines.defs.models import contract_result, contract_spec
from pipelines.index import INDEX_TABLE, publish_index
from pipelines.warehouse.model_contract import audit_failures, declared_table

INDEX_KEY = dg.AssetKey(INDEX_TABLE.split("."))
INDEX_INPUTS = ("intermediate.int_index_offer_days", "intermediate.int_index_rules")
INDEX_CONTRACT = declared_table(INDEX_TABLE, Path(__file__).resolve().parents[1] / "index" /
                                "sql" / "create_price_index.sql")


@dg.asset(key=INDEX_KEY, deps=[dg.AssetKey(t.split(".")) for t in INDEX_INPUTS],
          group_name="marts", kinds={"duckdb"}, pool=DUCKDB_POOL, op_tags=OVERLAP_TAGS,
          check_specs=[contract_spec(INDEX_CONTRACT)],
          description="marts.price_index: a matched-offer chained price index per card class, "
                      "market, offer kind and term, one row per closed day, with its interval, "
                      "coverage and the day's listing median; rows are appended, never "
                      "rewritten. See docs/price-index.md.")
def price_index(context: dg.AssetExecutionContext,
                duckdb: DuckDBResource) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    with duckdb.get_connection() as con:
        report = publish_index(con, datetime.now(UTC))
        rows = con.execute(f"select count(*) from {INDEX_TABLE}").fetchone()[0]
        failures = audit_failures(con, INDEX_CONTRACT)
    context.log.info(report.summary())
    for failure in failures:
        context.log.error(f"{failure.message}; first rows: {failure.sample}")
    yield dg.MaterializeResult(metadata={"row_count": rows, "appended": report.appended,
                                         "series": report.series})
    yield contract_result(INDEX_CONTRACT, failures)


index_assets = [price_index]
