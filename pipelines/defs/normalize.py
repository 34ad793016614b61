"""observation_batch -> (blocking checks) -> observations; quarantine for what cannot be normalized.

Rows are validated as a batch before they join the history, so bad data never reaches the marts.
"""


import json
from collections import Counter, defaultdict
from datetime import UTC, datetime
from decimal import Decimal
from statistics import median

import dagster as dg
import pandas as pd
from dagster_duckdb import DuckDBResource

from pipelines.defs.execution import DUCKDB_POOL
from pipelines.defs.ingest import RAW_KEYS
from pipelines.normalize import Quarantined, normalize_offer
from pipelines.warehouse.db import ensure_schema, transaction
from pipelines.warehouse.sql_files import sql_text

# A row whose per-GPU price is this far from the same vendor's single card (either way) carries the
# signature of a GPU count or per-card misread (x8 on an 8-GPU server, /8 when a per-card price is
# divided again). Real spreads stay inside it: a slice costs 1-2x the whole card per GPU-hour, an
# 8-GPU server 70-100 % of 8 single cards, regions of one vendor up to 3x apart (GCP H100).
CONSISTENCY_FACTOR = Decimal(4)


def is_single_card(row: dict) -> bool:
    return row["gpu_count"] == 1 and row["gpu_fraction"] == 1


def inconsistent_rows(rows: list[dict]) -> dict[int, str]:
    """Index -> reason for each row out of line with its vendor's single card of the same model.

    The reference is the median per-GPU-hour price (CNY) of the *other* single-card rows of the
    same source, card and offer kind in the batch (spot is compared with spot). A single card is
    only judged against at least two others: with one, which of the two is wrong is unknown.
    """
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        groups[row["source"], row["gpu_model"], row["offer_kind"]].append(i)
    reasons = {}
    for (_, model, kind), members in groups.items():
        singles = [i for i in members if is_single_card(rows[i])]
        for i in members:
            others = [rows[j]["price_per_gpu_hour_cny"] for j in singles if j != i]
            if len(others) < (2 if is_single_card(rows[i]) else 1):
                continue
            price, reference = rows[i]["price_per_gpu_hour_cny"], median(others)
            if reference * CONSISTENCY_FACTOR < price or price * CONSISTENCY_FACTOR < reference:
                ratio = max(price / reference, reference / price)
                reasons[i] = (
                    f"{price} CNY per GPU-hour is {ratio:.1f}x away from the vendor's single "
                    f"{model} card at {reference.quantize(Decimal('0.01'))} CNY per GPU-hour "
                    f"(median of {len(others)} {kind} single-card offers in this batch; more "
                    f"than {CONSISTENCY_FACTOR}x apart): a GPU count or per-card price misread?")
    return reasons


def normalize_pending(pending: list[tuple]) -> tuple[pd.DataFrame, list[dict]]:
    """Normalize (crawl_id, item_no, source, item_json) rows into batch rows and quarantine rows;
    rows out of line with their vendor's single card are quarantined at stage "consistency"."""
    rows, origins, quarantined, seen = [], [], [], set()
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
            origins.append((item_no, item_json))
        except Quarantined as exc:
            quarantined.append({"source": source, "crawl_id": crawl_id, "item_no": item_no,
                                "stage": exc.stage, "reason": exc.reason, "raw_item": item_json,
                                "quarantined_at": now})
        except Exception as exc:  # a parser bug must not stop the run: quarantine it, say what
            quarantined.append({"source": source, "crawl_id": crawl_id, "item_no": item_no,
                                "stage": "error", "reason": f"{type(exc).__name__}: {exc}",
                                "raw_item": item_json, "quarantined_at": now})
    out_of_line = inconsistent_rows(rows)
    for i, reason in out_of_line.items():
        item_no, item_json = origins[i]
        quarantined.append({"source": rows[i]["source"], "crawl_id": rows[i]["crawl_id"],
                            "item_no": item_no, "stage": "consistency", "reason": reason,
                            "raw_item": item_json, "quarantined_at": now})
    rows = [row for i, row in enumerate(rows) if i not in out_of_line]
    return pd.DataFrame(rows), quarantined


@dg.multi_asset(
    specs=[
        dg.AssetSpec("observation_batch", deps=RAW_KEYS, group_name="observations",
                     kinds={"python", "duckdb"},
                     description="Offers of this run's passing crawls, normalized and not yet "
                                 "published: validated by blocking checks before they join "
                                 "`observations`."),
        dg.AssetSpec("quarantine", deps=RAW_KEYS, group_name="observations", kinds={"duckdb"},
                     description="Every raw offer that could not be normalized: the raw item, "
                                 "source, stage and a human-readable reason."),
    ],
    pool=DUCKDB_POOL,
)
def observation_batch(context: dg.AssetExecutionContext, duckdb: DuckDBResource):
    with duckdb.get_connection() as con:
        ensure_schema(con)
        pending = con.execute(sql_text(__file__, "pending_offers")).fetchall()
        batch, quarantined = normalize_pending(pending)
        with transaction(con):
            con.execute("delete from observation_batch")
            if len(batch):
                con.register("batch_df", batch)
                con.execute("insert into observation_batch by name select * from batch_df")
                con.unregister("batch_df")
            if quarantined:
                con.register("quarantined", pd.DataFrame(quarantined))
                con.execute(sql_text(__file__, "insert_quarantined"))
                con.unregister("quarantined")
            con.execute(sql_text(__file__, "count_quarantined"))
    reasons = Counter(f"{q['source']}: {q['stage']}" for q in quarantined)
    context.log.info(f"normalized {len(batch)} offers, quarantined {len(quarantined)}")
    yield dg.MaterializeResult(asset_key="observation_batch",
                               metadata={"row_count": len(batch), "pending_offers": len(pending)})
    yield dg.MaterializeResult(asset_key="quarantine", metadata={
        "quarantined_count": len(quarantined),
        "by_source_and_stage": dg.MetadataValue.json(dict(reasons))})


@dg.asset(
    deps=["observation_batch"],
    group_name="observations",
    kinds={"duckdb"},
    pool=DUCKDB_POOL,
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
            con.execute("delete from observation_batch")
    context.log.info(f"observations: {after - before} new rows, {after} in all")
    return dg.MaterializeResult(metadata={"new_rows": after - before, "row_count": after})
