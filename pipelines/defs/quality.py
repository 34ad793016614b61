"""Blocking data-quality checks: a failed check stops `observations` and everything downstream."""


import dagster as dg
import great_expectations.expectations as gxe
from dagster_duckdb import DuckDBResource

from pipelines.lib.gx_checks import validate
from spiders.parsing.currencies import KNOWN_CURRENCIES
from spiders.parsing.gpu_models import CANONICAL_MODELS
from spiders.parsing.prices import HOURS_PER_PERIOD
from pipelines.lib.normalize import OFFER_KINDS

REQUIRED_COLUMNS = ("observed_at", "observed_hour", "source", "vendor", "vendor_kind", "region_code",
                    "country", "sku", "gpu_model", "gpu_count", "gpu_fraction", "vram_gb",
                    "offer_kind", "billing_period", "price_amount", "currency",
                    "price_per_gpu_hour_cny", "price_per_gpu_hour_usd", "fx_rate_date", "url",
                    "raw_ref", "offer_id")

OBSERVATION_SUITE = [
    *(gxe.ExpectColumnValuesToNotBeNull(column=c) for c in REQUIRED_COLUMNS),
    gxe.ExpectCompoundColumnsToBeUnique(column_list=["offer_id", "observed_hour"]),
    gxe.ExpectColumnValuesToBeInSet(column="currency", value_set=sorted(KNOWN_CURRENCIES)),
    gxe.ExpectColumnValuesToBeInSet(column="gpu_model", value_set=list(CANONICAL_MODELS)),
    gxe.ExpectColumnValuesToBeInSet(column="offer_kind", value_set=list(OFFER_KINDS)),
    gxe.ExpectColumnValuesToBeInSet(column="billing_period", value_set=list(HOURS_PER_PERIOD)),
    gxe.ExpectColumnValuesToBeBetween(column="gpu_fraction", min_value=0, max_value=1,
                                      strict_min=True),
    gxe.ExpectColumnValuesToBeBetween(column="gpu_count", min_value=1),
    gxe.ExpectColumnValuesToBeBetween(column="price_per_gpu_hour_cny", min_value=0, strict_min=True),
    gxe.ExpectColumnValuesToBeBetween(column="price_per_gpu_hour_usd", min_value=0, strict_min=True),
]

BATCH_AS_PANDAS_SQL = """
    select * replace (gpu_fraction::double as gpu_fraction, vram_gb::double as vram_gb,
                      price_amount::double as price_amount,
                      price_per_gpu_hour_cny::double as price_per_gpu_hour_cny,
                      price_per_gpu_hour_usd::double as price_per_gpu_hour_usd)
    from observation_batch
"""


@dg.asset_check(asset="observation_batch", blocking=True,
                description="Great Expectations suite: required fields not null, natural key "
                            "unique, currency / card / kind / period in their known sets, "
                            "gpu_fraction in (0, 1], prices positive.")
def observation_batch_meets_expectations(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        df = con.execute(BATCH_AS_PANDAS_SQL).df()
    result = validate(df, "observation_batch", OBSERVATION_SUITE)
    return dg.AssetCheckResult(
        passed=result.success,
        severity=dg.AssetCheckSeverity.ERROR,
        description=(f"{len(result.failures)} of {result.evaluated} expectations failed"
                     if result.failures else f"all {result.evaluated} expectations passed"),
        metadata={"rows": len(df), "failures": dg.MetadataValue.json(result.failures)},
    )
