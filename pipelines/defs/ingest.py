"""raw/<source>: one asset per source, so a broken source fails alone and the others still land."""


import json
from datetime import UTC, datetime

import dagster as dg
import pandas as pd
from dagster_duckdb import DuckDBResource

from pipelines.lib.db import ensure_schema, transaction
from pipelines.resources import CrawlerResource, CrawlResult
from spiders.registry import source_names, spider_class

CRAWL_CHECK = "crawl_passed_monitors"


def _record_crawl(con, result: CrawlResult, run_id: str, mode: str) -> None:
    verdict = result.verdict
    con.execute(
        "insert into raw.crawls (crawl_id, run_id, source, mode, started_at, finished_at, passed,"
        " status, offers, requests, failures) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [result.crawl_id, run_id, result.source, mode, verdict.get("started_at"),
         verdict.get("finished_at"), result.passed, result.status, result.offers,
         verdict.get("requests"), result.failures],
    )
    if result.passed:
        lines = result.items_path.read_text(encoding="utf-8").splitlines()
        items = pd.DataFrame({
            "crawl_id": result.crawl_id,
            "item_no": range(len(lines)),
            "source": result.source,
            "item": lines,
        })
        con.register("new_items", items)
        con.execute("insert into raw.offers select crawl_id, item_no, source, item::json from new_items")
        con.unregister("new_items")


def build_raw_asset(source: str) -> dg.AssetsDefinition:
    spider = spider_class(source)
    key = dg.AssetKey(["raw", source])

    @dg.asset(
        key=key,
        group_name="raw",
        kinds={"scrapy", "duckdb"},
        description=f"Raw offers crawled from {spider.vendor} ({source}), one row per offer in "
                    "raw.offers; the crawl's monitor verdict in raw.crawls.",
        check_specs=[dg.AssetCheckSpec(CRAWL_CHECK, asset=key,
                                       description="The crawl finished, returned enough offers "
                                                   "with every required field, and hit no errors.")],
        tags={"source": source},
    )
    def raw_source(context: dg.AssetExecutionContext, crawler: CrawlerResource,
                   duckdb: DuckDBResource):
        crawl_id = f"{source}-{datetime.now(UTC):%Y%m%dT%H%M%S}-{context.run_id[:8]}"
        context.log.info(f"crawling {source} ({crawler.mode})")
        result = crawler.crawl(source, crawl_id, context.log)
        with duckdb.get_connection() as con:
            ensure_schema(con)
            with transaction(con):
                _record_crawl(con, result, context.run_id, crawler.mode)
        if result.passed:
            context.log.info(f"{source}: {result.offers} offers loaded")
        elif result.skipped:
            context.log.warning(f"{source}: {result.failures[0]}")
        else:
            # Loud, but the other sources go on: nothing of this crawl is loaded, and earlier
            # observations of this source stay as they are.
            context.log.error(f"{source}: crawl failed, nothing loaded: {'; '.join(result.failures)}")
        return dg.MaterializeResult(
            metadata={"crawl_id": crawl_id, "offers": result.offers, "status": result.status,
                      "failures": dg.MetadataValue.json(result.failures)},
            check_results=[dg.AssetCheckResult(
                check_name=CRAWL_CHECK, passed=result.passed,
                # a skipped source (no API key) is a warning, a failed crawl an error
                severity=dg.AssetCheckSeverity.WARN if result.skipped else dg.AssetCheckSeverity.ERROR,
                description="; ".join(result.failures) or "crawl passed its monitors",
                metadata={"offers": result.offers, "failures": json.dumps(result.failures)},
            )],
        )

    return raw_source


raw_assets = [build_raw_asset(source) for source in source_names()]
RAW_KEYS = [a.key for a in raw_assets]
