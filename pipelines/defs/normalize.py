"""observation_batch -> (blocking checks) -> observations; quarantine for what cannot be normalized.

Rows are validated as a batch before they join the history, so bad data never reaches the marts.
"""


import json
from collections import Counter
from datetime import UTC, datetime

import dagster as dg
import pandas as pd
from dagster_duckdb import DuckDBResource

from pipelines.defs.ingest import RAW_KEYS
from pipelines.lib.db import ensure_schema, transaction
from pipelines.lib.normalize import Quarantined, normalize_offer

PENDING_OFFERS_SQL = """
    select o.crawl_id, o.item_no, o.source, o.item
    from raw.offers o join raw.crawls c using (crawl_id)
    where c.passed and c.normalized_at is null
    order by o.crawl_id, o.item_no
"""


def normalize_pending(pending: list[tuple]) -> tuple[pd.DataFrame, list[dict]]:
    """Normalize (crawl_id, item_no, source, item_json) rows into batch rows and quarantine rows."""
    rows, quarantined, seen = [], [], set()
    now = datetime.now(UTC)
    for crawl_id, item_no, source, item_json in pending:
        item = json.loads(item_json)
        try:
            row = normalize_offer(item)
            natural_key = (row["offer_id"], row["observed_hour"])
            if natural_key in seen:
                raise Quarantined("dedupe", "the same offer appears twice in one crawl hour")
            seen.add(natural_key)
            rows.append({**row, "crawl_id": crawl_id})
        except Quarantined as exc:
            quarantined.append({"source": source, "crawl_id": crawl_id, "item_no": item_no,
                                "stage": exc.stage, "reason": exc.reason, "raw_item": item_json,
                                "quarantined_at": now})
        except Exception as exc:  # a parser bug must not stop the run: quarantine it, say what
            quarantined.append({"source": source, "crawl_id": crawl_id, "item_no": item_no,
                                "stage": "error", "reason": f"{type(exc).__name__}: {exc}",
                                "raw_item": item_json, "quarantined_at": now})
    return pd.DataFrame(rows), quarantined


@dg.multi_asset(
    specs=[
        dg.AssetSpec("observation_batch", deps=RAW_KEYS, group_name="normalized",
                     kinds={"python", "duckdb"},
                     description="Offers of this run's passing crawls, normalized and not yet "
                                 "published: validated by blocking checks before they join "
                                 "`observations`."),
        dg.AssetSpec("quarantine", deps=RAW_KEYS, group_name="normalized", kinds={"duckdb"},
                     description="Every raw offer that could not be normalized: the raw item, "
                                 "source, stage and a human-readable reason."),
    ],
)
def observation_batch(context: dg.AssetExecutionContext, duckdb: DuckDBResource):
    with duckdb.get_connection() as con:
        ensure_schema(con)
        pending = con.execute(PENDING_OFFERS_SQL).fetchall()
        batch, quarantined = normalize_pending(pending)
        with transaction(con):
            con.execute("delete from observation_batch")
            if len(batch):
                con.register("batch_df", batch)
                con.execute("insert into observation_batch by name select * from batch_df")
                con.unregister("batch_df")
            if quarantined:
                con.register("q_df", pd.DataFrame(quarantined))
                con.execute("insert into quarantine by name select * from q_df on conflict do nothing")
                con.unregister("q_df")
            con.execute("""
                update raw.crawls c set quarantined_rows = (
                    select count(*) from quarantine q where q.crawl_id = c.crawl_id)
                where c.passed and c.normalized_at is null""")
    reasons = Counter(f"{q['source']}: {q['stage']}" for q in quarantined)
    context.log.info(f"normalized {len(batch)} offers, quarantined {len(quarantined)}")
    yield dg.MaterializeResult(asset_key="observation_batch",
                               metadata={"row_count": len(batch), "pending_offers": len(pending)})
    yield dg.MaterializeResult(asset_key="quarantine",
                               metadata={"quarantined_count": len(quarantined),
                                         "by_source_and_stage": dg.MetadataValue.json(dict(reasons))})


@dg.asset(
    deps=["observation_batch"],
    group_name="normalized",
    kinds={"duckdb"},
    description="Every observation of every offer: one typed row per offer per hour (natural key "
                "offer_id + observed_hour, so re-loading an observation is a no-op).",
)
def observations(context: dg.AssetExecutionContext, duckdb: DuckDBResource) -> dg.MaterializeResult:
    with duckdb.get_connection() as con:
        ensure_schema(con)
        with transaction(con):
            before = con.execute("select count(*) from observations").fetchone()[0]
            con.execute("insert into observations by name select * from observation_batch "
                        "on conflict do nothing")
            after = con.execute("select count(*) from observations").fetchone()[0]
            con.execute("""
                update raw.crawls c set normalized_at = now(), normalized_rows = (
                    select count(*) from observation_batch b where b.crawl_id = c.crawl_id)
                where c.passed and c.normalized_at is null""")
            con.execute("delete from observation_batch")
    context.log.info(f"observations: {after - before} new rows, {after} in all")
    return dg.MaterializeResult(metadata={"new_rows": after - before, "row_count": after})
