"""Data-quality checks. Blocking ones stop `observations` (and so every mart, feed and alert)
when the batch of newly normalized rows is wrong; every failure names the offending rows.
observation_batch has already judged each crawl by the same rules and held the ones refused
(crawl_holds.py), so these are a safety net on what lands: they fail only on a defect of the
judging itself.

The wiring only: what each check reads and how its result is reported. What a check expects
and the numbers it judges by are in pipelines/quality/ (suites.py, thresholds.py).
"""

from datetime import UTC, datetime

import dagster as dg
import pandas as pd
from dagster_duckdb import DuckDBResource
from duckdb import CatalogException

from pipelines.defs.execution import DUCKDB_POOL, DUCKDB_TAGS
from pipelines.quality.gx_checks import SuiteResult, suite_fingerprint, validate
from pipelines.quality.suites import (
    ROW_ID,
    SOURCE_ROW_ID,
    observation_suite,
    source_suite,
    with_card_bounds,
)
from pipelines.quality.thresholds import (
    FRESHNESS_HOURS,
    MAX_PRICE_LEVEL_FACTOR,
    MIN_SLICE_TO_WHOLE_PER_GPU,
    MIN_VOLUME_RATIO,
    TRAILING_CRAWLS,
    UNIQUE_WINDOW_HOURS,
)
from pipelines.warehouse.sql_files import sql_text


def batch_frame(con) -> pd.DataFrame:
    """The batch as the expectations read it, with each row's price checked against its card's
    plausible bounds."""
    return with_card_bounds(con.execute(sql_text(__file__, "batch_rows"),
                                        {"min_slice_share": MIN_SLICE_TO_WHOLE_PER_GPU}).df())


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
    now = datetime.now(UTC)
    with duckdb.get_connection() as con:
        df = batch_frame(con)
        passes = _suite_passes(con)
    suite = observation_suite(now)
    if _passed_when_judged(df, passes, now):
        return _result(SuiteResult(True, len(suite), []), len(df),
                       f"{len(df)} new rows (validated as observation_batch judged them: the "
                       "same rows and suite)")
    return _result(validate(df, "observation_batch", suite, ROW_ID), len(df),
                   f"{len(df)} new rows")


def _suite_passes(con) -> list[tuple[str, datetime]]:
    """raw.batch_suite_passes: none before observation_batch first records one."""
    try:
        return con.execute(sql_text(__file__, "suite_passes")).fetchall()
    except CatalogException:
        return []


def _passed_when_judged(df: pd.DataFrame, passes: list[tuple[str, datetime]],
                        now: datetime) -> bool:
    """Whether observation_batch's judging already ran this suite over exactly these rows and
    it passed: the same fingerprint (gx_checks.suite_fingerprint: the rows as a multiset, the
    columns, every expectation with its arguments), judged at or before `now` (the one bound
    that moves with time, observed_at not in the future, only widens). GX's verdict on the same
    frame and suite is the same, so the check's own validation would only repeat it; any
    difference (a row, a value, a column, an expectation) and the check validates anew."""
    for fingerprint, judged_at in passes:
        judged_at = judged_at.astimezone(UTC)
        if judged_at <= now and fingerprint == suite_fingerprint(
                df, observation_suite(judged_at)):
            return True
    return False


@dg.asset_check(asset="observation_batch", blocking=True, pool=DUCKDB_POOL, op_tags=DUCKDB_TAGS,
                description=f"Every crawl in the batch keeps at least {MIN_VOLUME_RATIO:g} of "
                            f"its source's median volume over its last {TRAILING_CRAWLS} crawls, "
                            f"and its median price per card stays within "
                            f"{MAX_PRICE_LEVEL_FACTOR:g}x of its source's last crawl (unless a "
                            "settlement let its new level in): a whole source gone wrong is "
                            "held before it lands.")
def observation_batch_sources_consistent(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        df = con.execute(sql_text(__file__, "crawl_levels"),
                         {"trailing_crawls": TRAILING_CRAWLS}).df()
    # a crawl whose new level a settlement let in (confirmed, accepted) is not judged again
    df = df[df["level_settled_by"].isna()]
    result = validate(df, "observation_batch_sources", source_suite(), SOURCE_ROW_ID)
    return _result(result, len(df), f"{df['source'].nunique()} sources")


@dg.asset_check(asset="observations", pool=DUCKDB_POOL, op_tags=DUCKDB_TAGS,
                description=f"Every source that ever landed has a passing crawl within "
                            f"{FRESHNESS_HOURS:g} h (GPUPRICES_FRESHNESS_HOURS) of the newest "
                            "crawl of any source (the run clock), and none has a "
                            "crawl a blocking rule holds back. Not blocking: a stale or held "
                            "source's earlier rows are still right; it is a warning.")
def sources_are_fresh(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        found = con.execute(sql_text(__file__, "stale_sources"),
                            {"freshness_hours": FRESHNESS_HOURS}).fetchall()
    stale = [(s, t) for s, t, _, fresh in found if not fresh]
    held = [(s, t) for s, _, t, _ in found if t is not None]
    said = ([f"stale sources: {', '.join(s for s, _ in stale)}"] if stale else []) + \
        ([f"held sources: {', '.join(f'{s} (since {t:%Y-%m-%d %H:%M})' for s, t in held)}"]
         if held else [])
    return dg.AssetCheckResult(
        passed=not found,
        severity=dg.AssetCheckSeverity.WARN,
        description="; ".join(said) if said else "every source crawled recently, none held",
        metadata={"stale": dg.MetadataValue.json(
            [{"source": s, "last_passing_crawl": str(t)} for s, t in stale]),
            "held": dg.MetadataValue.json([{"source": s, "held_since": str(t)} for s, t in held])},
    )


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
