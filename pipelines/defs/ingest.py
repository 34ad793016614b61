"""raw/<source>: one asset per source, so a broken source fails alone and the others still land.

A passing crawl's JSONL file goes straight into raw.offers (DuckDB reads it); every crawl's
verdict goes into raw.crawls."""

import json
import os
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.resources import CrawlerResource, CrawlResult
from pipelines.warehouse.db import ensure_schema, transaction
from pipelines.warehouse.sql_files import sql_text
from spiders.registry import source_names, spider_class

CRAWL_CHECK = "crawl_passed_monitors"
# The longest offer line DuckDB accepts (its default, 16 MB, would refuse a long one that reading
# the file line by line accepted).
MAX_LINE_BYTES = 1 << 30


def record_crawl(con, result: CrawlResult, run_id: str, mode: str) -> None:
    """One crawl into raw.crawls and, when it passed, its offers into raw.offers (the caller holds
    the transaction: a malformed line loses the crawl whole)."""
    verdict = result.verdict
    con.execute(sql_text(__file__, "insert_crawl"), {
        "crawl_id": result.crawl_id, "run_id": run_id, "source": result.source, "mode": mode,
        "started_at": verdict.get("started_at"), "finished_at": verdict.get("finished_at"),
        "passed": result.passed, "status": result.status, "offers": result.offers,
        "requests": verdict.get("requests"), "failures": result.failures})
    if result.passed:
        con.execute(sql_text(__file__, "insert_raw_offers"), {
            "crawl_id": result.crawl_id, "source": result.source,
            "items_path": str(result.items_path), "max_line_bytes": MAX_LINE_BYTES})


def _crawl_safely(crawler: CrawlerResource, source: str, crawl_id: str, log) -> CrawlResult:
    try:
        return crawler.crawl(source, crawl_id, log)
    except Exception as exc:  # a crawler bug in one source must not take the others down
        return CrawlResult(source, crawl_id, False, 0,
                           [f"crawler error: {type(exc).__name__}: {exc}"],
                           crawler.items_path(source, crawl_id))


def _check_result(source: str, result: CrawlResult) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        asset_key=dg.AssetKey(["raw", source]), check_name=CRAWL_CHECK, passed=result.passed,
        # a skipped source (no API key) is a warning, a failed crawl an error
        severity=dg.AssetCheckSeverity.WARN if result.skipped else dg.AssetCheckSeverity.ERROR,
        description="; ".join(result.failures) or "crawl passed its monitors",
        metadata={"offers": result.offers, "failures": json.dumps(result.failures)},
    )


SOURCES = source_names()
CRAWL_CONCURRENCY = int(os.environ.get("GPUPRICES_CRAWL_CONCURRENCY", "4"))


@dg.multi_asset(
    specs=[dg.AssetSpec(["raw", s], group_name="raw", kinds={"scrapy", "duckdb"},
                        tags={"source": s},
                        description=f"Raw offers crawled from {spider_class(s).vendor} ({s}), "
                                    "one row per offer in raw.offers; the crawl's verdict in "
                                    "raw.crawls.")
           for s in SOURCES],
    check_specs=[dg.AssetCheckSpec(CRAWL_CHECK, asset=["raw", s],
                                   description="The crawl finished, returned enough offers with "
                                               "every required field, and hit no errors.")
                 for s in SOURCES],
    can_subset=True,
    name="raw_offers",
    # A failed crawl is recorded, not raised; this retries what breaks the step itself (a locked
    # database, a full disk), twice, after 30 s and 90 s.
    retry_policy=dg.RetryPolicy(max_retries=2, delay=30, backoff=dg.Backoff.EXPONENTIAL),
)
def raw_offers(context: dg.AssetExecutionContext, crawler: CrawlerResource, duckdb: DuckDBResource):
    """Crawls every selected source, each in its own `scrapy crawl` subprocess, a few at a time:
    one source failing (or crashing) is recorded as failed and the others still land."""
    sources = [key.path[1] for key in context.selected_asset_keys]
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    context.log.info(f"crawling {len(sources)} sources ({crawler.mode}), "
                     f"{CRAWL_CONCURRENCY} at a time")
    with ThreadPoolExecutor(max_workers=CRAWL_CONCURRENCY) as pool:
        futures = {s: pool.submit(_crawl_safely, crawler, s, f"{s}-{stamp}-{context.run_id[:8]}",
                                  context.log) for s in sources}
        results = {s: f.result() for s, f in futures.items()}
    with duckdb.get_connection() as con:
        ensure_schema(con)
        for source in sources:
            with transaction(con):  # one transaction per source: a bad load loses only its own
                record_crawl(con, results[source], context.run_id, crawler.mode)
    for source in sources:
        result = results[source]
        if result.passed:
            context.log.info(f"{source}: {result.offers} offers loaded")
        elif result.skipped:
            context.log.warning(f"{source}: {result.failures[0]}")
        else:
            # Loud, but the other sources go on: nothing of this crawl is loaded, and earlier
            # observations of this source stay as they are.
            context.log.error(f"{source}: crawl failed, nothing loaded: "
                              f"{'; '.join(result.failures)}")
        yield dg.MaterializeResult(
            asset_key=["raw", source],
            metadata={"crawl_id": result.crawl_id, "offers": result.offers, "status": result.status,
                      "failures": dg.MetadataValue.json(result.failures)},
            check_results=[_check_result(source, result)],
        )


RAW_KEYS = [dg.AssetKey(["raw", s]) for s in SOURCES]
