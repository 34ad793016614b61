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

from pipelines.defs.execution import DUCKDB_POOL, DUCKDB_TAGS
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
    """Normalize (crawl_id, item_no, source, item_json) rows, in crawl order, into batch rows and
    quarantine rows; rows out of line with their vendor's single card are quarantined at stage
    "consistency".

    An offer twice in one crawl's hour is quarantined ("dedupe"). An offer and hour an earlier
    crawl of the batch already has (an hour crawled again after a crash or by an overlapping run)
    is not a problem: the earlier crawl's row is kept and the later one dropped, unless the earlier
    row is refused for consistency, when the later one is refused with it. So every pending row
    ends in the batch, in quarantine, or dropped as re-crawled."""
    rows, origins, quarantined = [], [], []
    kept_row: dict[tuple, int] = {}          # natural key -> index in rows of the kept row
    seen_in_crawl: set[tuple] = set()        # (crawl_id, natural key)
    recrawled: list[tuple[int, dict]] = []   # (index of the kept row, the later crawl's refusal)
    now = datetime.now(UTC)
    for crawl_id, item_no, source, item_json in pending:
        item = json.loads(item_json)
        refusal = {"source": source, "crawl_id": crawl_id, "item_no": item_no,
                   "raw_item": item_json, "quarantined_at": now}
        try:
            row = normalize_offer(item)
            natural_key = (row["offer_id"], row["observed_hour"])
            if (crawl_id, natural_key) in seen_in_crawl:
                raise Quarantined("dedupe", "the same offer appears twice in one crawl hour")
            seen_in_crawl.add((crawl_id, natural_key))
            if natural_key in kept_row:
                recrawled.append((kept_row[natural_key], refusal))
                continue
            kept_row[natural_key] = len(rows)
            rows.append({**row, "crawl_id": crawl_id})
            origins.append((item_no, item_json))
        except Quarantined as exc:
            quarantined.append({**refusal, "stage": exc.stage, "reason": exc.reason})
        except Exception as exc:  # a parser bug must not stop the run: quarantine it, say what
            quarantined.append({**refusal, "stage": "error",
                                "reason": f"{type(exc).__name__}: {exc}"})
    out_of_line = inconsistent_rows(rows)
    for i, reason in out_of_line.items():
        item_no, item_json = origins[i]
        quarantined.append({"source": rows[i]["source"], "crawl_id": rows[i]["crawl_id"],
                            "item_no": item_no, "stage": "consistency", "reason": reason,
                            "raw_item": item_json, "quarantined_at": now})
    quarantined += [{**refusal, "stage": "consistency", "reason": out_of_line[kept]}
                    for kept, refusal in recrawled if kept in out_of_line]
    rows = [row for i, row in enumerate(rows) if i not in out_of_line]
    return pd.DataFrame(rows), quarantined


def crawl_counts(pending: list[tuple], quarantined: list[dict]) -> pd.DataFrame:
    """Per crawl of the batch: its offers that became observations (in the batch, or dropped as
    re-crawled: an earlier crawl's equal row stands for them) and those refused."""
    read = Counter(crawl_id for crawl_id, *_ in pending)
    refused = Counter(q["crawl_id"] for q in quarantined)
    return pd.DataFrame([{"crawl_id": crawl_id, "normalized_rows": offers - refused[crawl_id],
                          "quarantined_rows": refused[crawl_id]}
                         for crawl_id, offers in read.items()],
                        columns=["crawl_id", "normalized_rows", "quarantined_rows"])


@dg.multi_asset(
    specs=[
        dg.AssetSpec("observation_batch", deps=RAW_KEYS, group_name="observations",
                     kinds={"python", "duckdb"},
                     description="Offers of this run's passing crawls, normalized and not yet "
                                 "published: validated by blocking checks before they join "
                                 "`observations`."),
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
            batch, quarantined = normalize_pending(pending)
            con.execute("delete from observation_batch")
            if len(batch):
                con.register("batch_df", batch)
                con.execute("insert into observation_batch by name select * from batch_df")
                con.unregister("batch_df")
            if quarantined:
                con.register("quarantined", pd.DataFrame(quarantined))
                con.execute(sql_text(__file__, "insert_quarantined"))
                con.unregister("quarantined")
            con.register("crawl_counts", crawl_counts(pending, quarantined))
            con.execute(sql_text(__file__, "count_batch_crawls"))
            con.unregister("crawl_counts")
            con.execute(sql_text(__file__, "count_quarantined"))
            crawls = con.execute("select count(*) from raw.batch_crawls").fetchone()[0]
    recrawled = len(pending) - len(batch) - len(quarantined)
    reasons = Counter(f"{q['source']}: {q['stage']}" for q in quarantined)
    context.log.info(f"normalized {len(batch)} offers of {crawls} crawls, quarantined "
                     f"{len(quarantined)}, dropped {recrawled} re-crawled (the same offer and "
                     "hour from an earlier crawl in the batch)")
    yield dg.MaterializeResult(asset_key="observation_batch", metadata={
        "row_count": len(batch), "pending_offers": len(pending), "crawls": crawls,
        "recrawled_offers": recrawled})
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
            con.execute("delete from observation_batch")
            con.execute("delete from raw.batch_crawls")
    context.log.info(f"observations: {after - before} new rows, {after} in all")
    return dg.MaterializeResult(metadata={"new_rows": after - before, "row_count": after})
