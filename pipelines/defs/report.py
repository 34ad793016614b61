"""The price-history report, data/report/index.html: one self-contained page (plotly.js inlined,
so it opens offline), rebuilt from the working database after the marts and published by rename.
Nothing waits for it: a report that cannot be written fails its own step only (the prices are
published without it). A run that landed no source leaves the last report as it is.
"""

from collections.abc import Iterator

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.execution import DUCKDB_POOL, OVERLAP_TAGS
from pipelines.defs.feeds import nothing_landed
from pipelines.index import INDEX_TABLE
from pipelines.publish import refuse_unless_writable_dir
from pipelines.report import ADVICE_TABLE, REPORT_TABLES, build_report
from spiders.layout import report_path


def _asset_key(table: str) -> dg.AssetKey:
    """`observations` -> observations; `marts.cheapest_offers` -> marts/cheapest_offers."""
    return dg.AssetKey(table.split("."))


# advisor.workload_advice and marts.price_index are written by the assets of the same key paths
# (optional for the page, which says so when they are missing, but built first in a run).
@dg.asset(key=["report", "price_report"],
          deps=[_asset_key(t) for t in (*REPORT_TABLES, ADVICE_TABLE, INDEX_TABLE)],
          group_name="report", kinds={"html", "plotly"}, pool=DUCKDB_POOL, op_tags=OVERLAP_TAGS,
          output_required=False,
          description="data/report/index.html: the cheapest offers now, the price history "
                      "per card, the price index per card, the market by card family, the "
                      "saved workloads' best options, the signals, and the market-claims "
                      "scorecard last, as one offline HTML "
                      "page. Written to a temporary file, then renamed.")
def price_report(context: dg.AssetExecutionContext,
                 duckdb: DuckDBResource) -> Iterator[dg.MaterializeResult]:
    target = report_path()
    refuse_unless_writable_dir(target.parent)   # a file where report/ belongs, named as such
    with duckdb.get_connection() as con:
        if nothing_landed(con, context.run_id):
            context.log.warning("no source landed this run: the report is left as it was")
            return
        result = build_report(con, target)
    yield dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(str(result.path)), "bytes": result.bytes,
        "charts": result.charts, "tables": result.tables})


report_assets = [price_report]
