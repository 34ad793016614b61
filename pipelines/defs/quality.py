"""Data-quality checks. Blocking ones stop `observations` (and so every mart, feed and alert)
when the batch of newly normalized rows is wrong; every failure names the offending rows.

Row-level problems are quarantined during normalization, so these checks guard what row-level
rules cannot see: duplicates, a normalizer regression, and a whole source gone wrong (its
volume collapsing, or its price level jumping as when a currency is misread).
A blocked batch stays pending; `gpuprices reject <crawl_id>` sets a bad crawl aside.
"""

import os
from datetime import UTC, datetime, timedelta

import dagster as dg
import pandas as pd
from dagster_duckdb import DuckDBResource

from pipelines.defs.execution import DUCKDB_POOL, DUCKDB_TAGS
from pipelines.normalize import OFFER_KINDS, PRICE_BOUNDS_CNY_PER_GPU_HOUR
from pipelines.quality.gx_checks import validate
from pipelines.warehouse.sql_files import sql_text
from spiders.parsing.currencies import KNOWN_CURRENCIES
from spiders.parsing.gpu_models import CANONICAL_MODELS, gpu_family
from spiders.parsing.machine import MAX_DISK_GB, MAX_MEMORY_GIB, MAX_VCPUS
from spiders.parsing.prices import HOURS_PER_PERIOD

REQUIRED_COLUMNS = ("observed_at", "observed_hour", "source", "vendor", "vendor_kind",
                    "region_code", "country", "sku", "gpu_model", "gpu_count", "gpu_fraction",
                    "vram_gb", "offer_kind", "billing_period", "price_amount", "currency",
                    "price_per_gpu_hour_cny", "price_per_gpu_hour_usd", "fx_rate_date", "url",
                    "raw_ref", "offer_id")
ROW_ID = ["source", "sku", "region_code", "offer_kind", "billing_period"]

# A slice's price per whole-GPU equivalent below this share of the same vendor's whole card (same
# card, region, kind, period) is implausible: slices sell at or above pro-rata, not at half.
MIN_SLICE_TO_WHOLE_PER_GPU = 0.5
# A source's batch may not shrink below this share of its median volume over its last crawls ...
MIN_VOLUME_RATIO = 0.5
TRAILING_CRAWLS = 7
# ... and its median price per card may not move by more than this factor from its last crawl
# (a misread currency moves it ~7x, a 厘/元 slip 1000x; real market moves are far smaller).
MAX_PRICE_LEVEL_FACTOR = 3.0
FRESHNESS_HOURS = float(os.environ.get("GPUPRICES_FRESHNESS_HOURS", "3"))


def _expectations():
    """Great Expectations' expectation classes, imported when a check runs: GX takes longer to
    import than Dagster, and every process that loads the definitions (each step of the
    multiprocess executor, the UI's code server) would pay for it otherwise."""
    import great_expectations.expectations as gxe

    return gxe


def observation_suite(now: datetime) -> list:
    gxe = _expectations()
    return [
        *(gxe.ExpectColumnValuesToNotBeNull(column=c) for c in REQUIRED_COLUMNS),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["offer_id", "observed_hour"]),
        gxe.ExpectColumnValuesToBeInSet(column="currency", value_set=sorted(KNOWN_CURRENCIES)),
        gxe.ExpectColumnValuesToBeInSet(column="gpu_model", value_set=list(CANONICAL_MODELS)),
        gxe.ExpectColumnValuesToBeInSet(column="offer_kind", value_set=list(OFFER_KINDS)),
        gxe.ExpectColumnValuesToBeInSet(column="billing_period", value_set=list(HOURS_PER_PERIOD)),
        gxe.ExpectColumnValuesToBeBetween(column="gpu_fraction", min_value=0, max_value=1,
                                          strict_min=True),
        gxe.ExpectColumnValuesToBeBetween(column="gpu_count", min_value=1),
        # the machine's specs, where stated (GX skips nulls): a misread, not a machine, past these
        *(gxe.ExpectColumnValuesToBeBetween(column=column, min_value=0, max_value=float(ceiling),
                                            strict_min=True)
          for column, ceiling in (("vcpus", MAX_VCPUS), ("memory_gib", MAX_MEMORY_GIB),
                                  ("disk_gb", MAX_DISK_GB))),
        *(gxe.ExpectColumnValuesToBeBetween(column=c, min_value=0, strict_min=True)
          for c in ("price_per_gpu_hour_cny", "price_per_gpu_hour_usd")),
        gxe.ExpectColumnValuesToBeBetween(column="observed_at",
                                          max_value=(now + timedelta(minutes=5)).isoformat()),
        gxe.ExpectColumnValuesToBeInSet(column="price_within_card_bounds", value_set=[True]),
        gxe.ExpectColumnValuesToBeInSet(column="slice_price_plausible", value_set=[True]),
    ]


def source_suite() -> list:
    gxe = _expectations()
    return [
        gxe.ExpectColumnValuesToBeBetween(column="volume_ratio", min_value=MIN_VOLUME_RATIO),
        gxe.ExpectColumnValuesToBeBetween(column="price_level_ratio",
                                          min_value=1 / MAX_PRICE_LEVEL_FACTOR,
                                          max_value=MAX_PRICE_LEVEL_FACTOR),
    ]


def batch_frame(con) -> pd.DataFrame:
    """The batch as the expectations read it, with each row's price checked against its card's
    plausible bounds (PRICE_BOUNDS_CNY_PER_GPU_HOUR)."""
    df = con.execute(sql_text(__file__, "batch_rows"),
                     {"min_slice_share": MIN_SLICE_TO_WHOLE_PER_GPU}).df()
    bounds = df["gpu_model"].map(lambda m: PRICE_BOUNDS_CNY_PER_GPU_HOUR.get(gpu_family(m))
                                 if m in CANONICAL_MODELS else None)
    df["price_within_card_bounds"] = [
        b is not None and float(b[0]) <= p <= float(b[1])
        for b, p in zip(bounds, df["price_per_gpu_hour_cny"], strict=True)]
    return df


def _result(result, rows: int, what: str) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        passed=result.success,
        severity=dg.AssetCheckSeverity.ERROR,
        description=(f"{len(result.failures)} of {result.evaluated} expectations failed on {what}"
                     if result.failures
                     else f"all {result.evaluated} expectations passed on {what}"),
        metadata={"rows": rows, "failures": dg.MetadataValue.json(result.failures)},
    )


@dg.asset_check(asset="observation_batch", blocking=True, pool=DUCKDB_POOL, op_tags=DUCKDB_TAGS,
                description="Great Expectations suite on the new rows: required fields not null, "
                            "natural key unique, currency / card / kind / period known, "
                            "gpu_fraction in (0, 1], prices positive and within the card's "
                            "plausible bounds, observed_at not in the future, slices not "
                            "implausibly cheaper than the same vendor's whole card.")
def observation_batch_meets_expectations(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        df = batch_frame(con)
    result = validate(df, "observation_batch", observation_suite(datetime.now(UTC)), ROW_ID)
    return _result(result, len(df), f"{len(df)} new rows")


@dg.asset_check(asset="observation_batch", blocking=True, pool=DUCKDB_POOL, op_tags=DUCKDB_TAGS,
                description=f"Every source in the batch keeps at least {MIN_VOLUME_RATIO:g} of "
                            f"its median volume over its last {TRAILING_CRAWLS} crawls, and its "
                            f"median price per card stays within {MAX_PRICE_LEVEL_FACTOR:g}x of "
                            "its last crawl: a whole source gone wrong stops the marts.")
def observation_batch_sources_consistent(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        df = con.execute(sql_text(__file__, "source_levels"),
                         {"trailing_crawls": TRAILING_CRAWLS}).df()
    result = validate(df, "observation_batch_sources", source_suite(), ["source", "gpu_model"])
    return _result(result, len(df), f"{df['source'].nunique()} sources")


@dg.asset_check(asset="observations", pool=DUCKDB_POOL, op_tags=DUCKDB_TAGS,
                description=f"Every source that ever landed has a passing crawl in the last "
                            f"{FRESHNESS_HOURS:g} h (GPUPRICES_FRESHNESS_HOURS). Not blocking: a "
                            "stale source's earlier rows are still right; it is a warning.")
def sources_are_fresh(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        stale = con.execute(sql_text(__file__, "stale_sources"),
                            {"freshness_hours": FRESHNESS_HOURS}).fetchall()
    return dg.AssetCheckResult(
        passed=not stale,
        severity=dg.AssetCheckSeverity.WARN,
        description=(f"stale sources: {', '.join(s for s, _ in stale)}" if stale
                     else "every source crawled recently"),
        metadata={"stale": dg.MetadataValue.json(
            [{"source": s, "last_passing_crawl": str(t)} for s, t in stale])},
    )


# How far back the uniqueness check looks: the hours a run writes, with room for a late crawl.
UNIQUE_WINDOW_HOURS = 72


@dg.asset_check(asset="observations", blocking=True, pool=DUCKDB_POOL, op_tags=DUCKDB_TAGS,
                description=f"No offer is observed twice in one hour over the newest "
                            f"{UNIQUE_WINDOW_HOURS} h: the table has no primary key (its index "
                            "cost most of each run's load), the pipeline keeps it unique. "
                            "Blocking: a duplicate would count twice in every mart.")
def observations_unique_per_offer_hour(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        duplicates = con.execute(sql_text(__file__, "duplicate_observations"),
                                 {"window_hours": UNIQUE_WINDOW_HOURS}).fetchall()
    return dg.AssetCheckResult(
        passed=not duplicates,
        description=(f"{len(duplicates)} offer-hours observed more than once" if duplicates
                     else f"every offer once per hour over the last {UNIQUE_WINDOW_HOURS} h"),
        metadata={"duplicates": dg.MetadataValue.json(
            [{"offer_id": o, "observed_hour": str(h), "copies": n} for o, h, n in duplicates])},
    )
