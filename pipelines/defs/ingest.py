"""raw/<source>: one asset per source, so a broken source fails alone and the others still land.
In process (the default) one step crawls them all; with GPUPRICES_EXECUTOR=multiprocess each
source is its own crawl step and load step (pipelines/defs/execution.py).

A passing crawl's JSONL file goes straight into raw.offers (DuckDB reads it); every crawl's
verdict goes into raw.crawls."""

import json
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines import crawl_ahead
from pipelines.defs.execution import DUCKDB_POOL, DUCKDB_TAGS, MULTIPROCESS
from pipelines.preflight import DiskRefused, check_ready_to_write
from pipelines.resources import CrawlerResource, CrawlResult
from pipelines.warehouse.db import ensure_schema, transaction
from pipelines.warehouse.sql_files import sql_text
from pipelines.warm_up import warming_up
from spiders.layout import SNAPSHOT_DIR
from spiders.price_basis import crawl_price_basis
from spiders.registry import source_names
from spiders.source_manifest import manifest

CRAWL_CHECK = "crawl_passed_monitors"
# The longest offer line DuckDB accepts (its default, 16 MB, would refuse a long one that reading
# the file line by line accepted).
MAX_LINE_BYTES = 1 << 30


def record_crawl(con, result: CrawlResult, run_id: str, mode: str,
                 snapshot_dir: str | Path = SNAPSHOT_DIR) -> None:
    """One crawl into raw.crawls, with where its prices come from (live, or what its replayed
    snapshot says of its prices), and, when it passed, its offers into raw.offers (the caller
    holds the transaction: a malformed line loses the crawl whole)."""
    verdict = result.verdict
    basis, as_of = crawl_price_basis(mode, snapshot_dir, result.source)
    con.execute(sql_text(__file__, "insert_crawl"), {
        "crawl_id": result.crawl_id, "run_id": run_id, "source": result.source, "mode": mode,
        "started_at": verdict.get("started_at"), "finished_at": verdict.get("finished_at"),
        "passed": result.passed, "status": result.status, "offers": result.offers,
        "requests": verdict.get("requests"), "failures": result.failures,
        "price_basis": basis, "prices_as_of": as_of, "opted_in": result.opted_in})
    if result.passed:
        con.execute(sql_text(__file__, "insert_raw_offers"), {
            "crawl_id": result.crawl_id, "source": result.source,
            "items_path": str(result.items_path), "max_line_bytes": MAX_LINE_BYTES})


def record_crawls(con, results: dict[str, CrawlResult], sources: list[str], run_id: str,
                  mode: str, snapshot_dir: str | Path = SNAPSHOT_DIR) -> None:
    """Every source's crawl (record_crawl), all in one transaction: one commit instead of one per
    source (46 commits were a second of the crawl step). When any load fails (a malformed line),
    that transaction is rolled back and the crawls are recorded again one transaction per source,
    as they always were: the sources before the bad one land, the bad one loses its crawl whole
    and its error fails the step."""
    try:
        with transaction(con):
            for source in sources:
                record_crawl(con, results[source], run_id, mode, snapshot_dir)
        return
    except Exception:   # the loads one by one meet the same error, where it belongs
        pass
    for source in sources:
        with transaction(con):
            record_crawl(con, results[source], run_id, mode, snapshot_dir)


def _crawl_safely(crawler: CrawlerResource, source: str, crawl_id: str, log) -> CrawlResult:
    """One source alone (the multiprocess layout's step)."""
    try:
        return crawler.crawl(source, crawl_id, log)
    except Exception as exc:  # a crawler bug in one source must not take the others down
        return CrawlResult(source, crawl_id, False, 0,
                           [f"crawler error: {type(exc).__name__}: {exc}"],
                           crawler.items_path(source, crawl_id))


def _check_result(source: str, result: CrawlResult) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        asset_key=dg.AssetKey(["raw", source]), check_name=CRAWL_CHECK, passed=result.passed,
        # a skipped source (opt-in and not named, or no API key) is a warning, a failed crawl an
        # error
        severity=dg.AssetCheckSeverity.WARN if result.skipped else dg.AssetCheckSeverity.ERROR,
        description="; ".join(result.failures) or "crawl passed its monitors",
        metadata={"offers": result.offers, "failures": json.dumps(result.failures)},
    )


SOURCES = source_names()
# No step retry policy on the crawl or load steps. Network faults never reach one: each request is
# retried inside Scrapy (spiders/middlewares/retry.py, back-off, Retry-After), a source a dead
# shared process left is crawled again alone, a failed crawl is recorded (not raised) and the next
# run crawls it again. What does raise here is the disk (a locked, read-only or full database, a
# malformed JSONL line), which waiting does not cure; a step retry re-crawled every source three
# times (30 s, then 90 s apart) before failing the same way.


def refuse_unless_ready(open_database: bool = True) -> None:
    """The step's first act: fail it at once, without retries and before any crawling, when the
    data directory or the working database cannot be written (pipelines/preflight.py)."""
    try:
        check_ready_to_write(open_database=open_database)
    except DiskRefused as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None


def _materialization(context, result: CrawlResult) -> dict:
    """Log how a crawl went, unless it passed (say_loaded says that of every passing crawl in one
    line); its materialization metadata."""
    source = result.source
    if result.retried_alone:
        context.log.warning(f"{source}: retried alone: {result.retry_reason}")
    if result.passed:
        pass   # said with the others (say_loaded)
    elif result.skipped:
        context.log.warning(f"{source}: {result.failures[0]}")
    else:
        # Loud, but the other sources go on: nothing of this crawl is loaded, and earlier
        # observations of this source stay as they are.
        context.log.error(f"{source}: crawl failed, nothing loaded: {'; '.join(result.failures)}")
    metadata = {"crawl_id": result.crawl_id, "offers": result.offers, "status": result.status,
                "failures": dg.MetadataValue.json(result.failures)}
    if result.retried_alone:
        metadata["retried_alone"] = result.retry_reason
    return metadata


def say_loaded(context, results: list[CrawlResult]) -> None:
    """One log line for every source that landed ("N offers loaded: aws 50, azure 140, ..."),
    not one each: every line is an event the run stores (46 of them were a second of the crawl
    step). Each source's count is also in its materialization's metadata; a skipped or failed
    source still has a line of its own (_materialization)."""
    loaded = sorted((r for r in results if r.passed), key=lambda r: r.source)
    if loaded:
        sources = f"{len(loaded)} source" + ("s" if len(loaded) > 1 else "")
        context.log.info(f"{sum(r.offers for r in loaded)} offers loaded from {sources}: "
                         + ", ".join(f"{r.source} {r.offers}" for r in loaded))


def _spec(source: str) -> dg.AssetSpec:
    return dg.AssetSpec(["raw", source], group_name="raw", kinds={"scrapy", "duckdb"},
                        tags={"source": source},
                        description=f"Raw offers crawled from {manifest()[source].vendor} "
                                    f"({source}), one row per offer in raw.offers; the crawl's "
                                    "verdict in raw.crawls.")


def _check_spec(source: str) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec(CRAWL_CHECK, asset=["raw", source],
                             description="The crawl finished, returned enough offers with every "
                                         "required field, and hit no errors.")


def build_raw_offers() -> dg.AssetsDefinition:
    """In process: every source in one step, crawled by two shared Scrapy processes."""

    @dg.multi_asset(
        specs=[_spec(s) for s in SOURCES],
        check_specs=[_check_spec(s) for s in SOURCES],
        can_subset=True,
        name="raw_offers",
    )
    def raw_offers(context: dg.AssetExecutionContext, crawler: CrawlerResource,
                   duckdb: DuckDBResource):
        """Crawls every selected source: the plain-HTTP ones in one Scrapy process, the Chromium
        ones in another; one source failing is recorded as failed and the others still land."""
        refuse_unless_ready()
        sources = [key.path[1] for key in context.selected_asset_keys]
        ahead = crawl_ahead.take(context.run_id, sources, crawler)
        jobs = ahead.jobs if ahead else {s: crawl_ahead.crawl_id(s, context.run_id)
                                         for s in sources}
        context.log.info(f"crawling {len(sources)} sources ({crawler.mode}) in shared processes"
                         + (" (started before the run, by gpuprices run)" if ahead else ""))
        try:
            with warming_up():   # GX and the ECB rates, for the checks and normalizing
                results = (ahead.results.result() if ahead
                           else crawler.crawl_many(jobs, context.log))
        except Exception as exc:  # a crawler bug must not lose the verdicts: record it per source
            results = {s: CrawlResult(s, c, False, 0,
                                      [f"crawler error: {type(exc).__name__}: {exc}"],
                                      crawler.items_path(s, c)) for s, c in jobs.items()}
        if ahead:
            ahead.log.say_to(context.log)
        with duckdb.get_connection() as con:
            ensure_schema(con)
            record_crawls(con, results, sources, context.run_id, crawler.mode,
                          crawler.snapshot_dir)
        say_loaded(context, [results[s] for s in sources])
        for source in sources:
            result = results[source]
            yield dg.MaterializeResult(asset_key=["raw", source],
                                       metadata=_materialization(context, result),
                                       check_results=[_check_result(source, result)])

    return raw_offers


def build_source_asset(source: str) -> dg.AssetsDefinition:
    """Multiprocess: one source's crawl as its own step, alone in its own `scrapy crawl`
    process, then its load into DuckDB as a step of the duckdb_writer pool (the crawls of all
    sources run side by side; only the loads take turns)."""

    @dg.op(name=f"crawl_{source}", tags={"source": source})
    def crawl_source(context: dg.OpExecutionContext, crawler: CrawlerResource) -> CrawlResult:
        # the database is checked by the load step: here other sources' loads may hold it
        refuse_unless_ready(open_database=False)
        return _crawl_safely(crawler, source, crawl_ahead.crawl_id(source, context.run_id),
                             context.log)

    @dg.op(name=f"load_{source}", pool=DUCKDB_POOL, tags={"source": source, **(DUCKDB_TAGS or {})},
           out={"result": dg.Out(dg.Nothing), "check": dg.Out(dg.Nothing)})
    def load_source(context: dg.OpExecutionContext, duckdb: DuckDBResource,
                    crawler: CrawlerResource, result: CrawlResult):
        refuse_unless_ready()
        with duckdb.get_connection() as con:
            ensure_schema(con)
            with transaction(con):
                record_crawl(con, result, context.run_id, crawler.mode, crawler.snapshot_dir)
        say_loaded(context, [result])
        yield dg.Output(None, output_name="result", metadata=_materialization(context, result))
        yield _check_result(source, result)

    @dg.graph_asset(key=["raw", source], group_name="raw",
                    kinds={"scrapy", "duckdb"}, tags={"source": source},
                    description=_spec(source).description, check_specs=[_check_spec(source)])
    def raw_source():
        loaded, checked = load_source(crawl_source())
        return {"result": loaded, f"raw__{source}_{CRAWL_CHECK}": checked}

    return raw_source


raw_assets = ([build_source_asset(s) for s in SOURCES] if MULTIPROCESS
              else [build_raw_offers()])

RAW_KEYS = [dg.AssetKey(["raw", s]) for s in SOURCES]
