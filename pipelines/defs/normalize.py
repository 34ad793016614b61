"""observation_batch -> (blocking checks) -> observations; quarantine for what cannot be normalized.

Rows are validated as a batch before they join the history, so bad data never reaches the marts:
each crawl is judged by every blocking rule first, and one a rule refuses is held alone
(crawl_holds.py), so the blocking checks see only what lands.
The wiring only: reading the pending offers, writing the batch and the quarantine. Every rule
that refuses an offer (each quarantine stage) is in pipelines/normalize/.
"""


from collections import Counter
from datetime import UTC, datetime

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.crawl_holds import land_or_hold
from pipelines.defs.execution import DUCKDB_POOL, DUCKDB_TAGS
from pipelines.defs.ingest import RAW_KEYS
from pipelines.warehouse.crawl_first_days import record_crawl_first_days
from pipelines.warehouse.db import ensure_schema, transaction
from pipelines.warehouse.sql_files import sql_text


@dg.multi_asset(
    specs=[
        dg.AssetSpec("observation_batch", deps=RAW_KEYS, group_name="observations",
                     kinds={"python", "duckdb"},
                     description="Offers of this run's passing crawls (and of those held "
                                 "before), normalized and not yet published; each crawl judged "
                                 "by every blocking rule, a refused one held alone "
                                 "(raw.crawl_decisions): what remains is validated by the "
                                 "blocking checks before it joins `observations`."),
        dg.AssetSpec("quarantine", deps=RAW_KEYS, group_name="observations", kinds={"duckdb"},
                     description="Every raw offer that could not be normalized: the raw item, "
                                 "source, stage and a human-readable reason; once per captured "
                                 "item (a replay of the same bytes adds no row)."),
    ],
    pool=DUCKDB_POOL, op_tags=DUCKDB_TAGS,
)
def observation_batch(context: dg.AssetExecutionContext, duckdb: DuckDBResource):
    with duckdb.get_connection() as con:
        ensure_schema(con)
        # The crawls read and the batch made of them are recorded together (raw.batch_crawls):
        # `observations` marks exactly those crawls, whatever was loaded in between.
        with transaction(con):
            con.execute("delete from raw.batch_crawls")
            con.execute(sql_text(__file__, "choose_batch_crawls"))
            pending = con.execute(sql_text(__file__, "pending_offers")).fetchall()
            # each crawl judged by every blocking rule: those refused are held, alone; the
            # batch is then made of the crawls that land (crawl_holds.py)
            made = land_or_hold(con, pending, datetime.now(UTC))
            crawls = con.execute("select count(*) from raw.batch_crawls").fetchone()[0]
    outcome, batch, quarantined = made.outcome, made.batch, made.quarantined
    landed_refused = sum(q["crawl_id"] in outcome.landing for q in quarantined)
    recrawled = made.landing_offers - len(batch) - landed_refused
    reasons = Counter(f"{q['source']}: {q['stage']}" for q in quarantined)
    decided = [f"{d.source} {d.crawl_id} {d.decision}: {d.reason}" for d in outcome.decisions]
    context.log.info(f"normalized {len(batch)} offers, quarantined {len(quarantined)}, dropped "
                     f"{recrawled} re-crawled (the same offer and hour from an earlier crawl in "
                     f"the batch); {len(batch)} rows of {crawls} crawls land")
    for line in decided:
        context.log.warning(line)
    yield dg.MaterializeResult(asset_key="observation_batch", metadata={
        "row_count": len(batch), "pending_offers": len(pending), "crawls": crawls,
        "recrawled_offers": recrawled, "decisions": dg.MetadataValue.json(decided)})
    yield dg.MaterializeResult(asset_key="quarantine", metadata={
        "quarantined_count": len(quarantined),
        "by_source_and_stage": dg.MetadataValue.json(dict(reasons))})


@dg.asset(
    deps=["observation_batch"],
    group_name="observations",
    kinds={"duckdb"},
    pool=DUCKDB_POOL, op_tags=DUCKDB_TAGS,
    description="Every observation of every offer: one typed row per offer per hour (natural key "
                "offer_id + observed_hour, so re-loading an observation is a no-op).",
)
def observations(context: dg.AssetExecutionContext, duckdb: DuckDBResource) -> dg.MaterializeResult:
    with duckdb.get_connection() as con:
        ensure_schema(con)
        with transaction(con):
            before = con.execute("select count(*) from observations").fetchone()[0]
            con.execute(sql_text(__file__, "publish_batch"))
            after = con.execute("select count(*) from observations").fetchone()[0]
            con.execute(sql_text(__file__, "mark_normalized"))
            # the landed crawls' first day, from the rows just written: the model runner then
            # finds the hour's first new day without scanning the history
            record_crawl_first_days(con, con.execute(
                "select min(observed_hour) from observation_batch").fetchone()[0])
            con.execute("delete from observation_batch")
            con.execute("delete from raw.batch_crawls")
    context.log.info(f"observations: {after - before} new rows, {after} in all")
    return dg.MaterializeResult(metadata={"new_rows": after - before, "row_count": after})
