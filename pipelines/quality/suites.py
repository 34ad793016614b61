"""What the blocking checks expect of a batch, as Great Expectations suites over pandas frames:
the rows of `observation_batch` (observation_suite) and each source's volume and price level
against its own history (source_suite). Pure: the checks (pipelines/defs/quality.py) read the
frames from the database and run the suites with gx_checks.validate. No GX import here: a
suite is plain data (Expect), built into GX's objects where it is validated.

Row-level problems are quarantined during normalization, so these guard what row-level rules
cannot see: duplicates, a normalizer regression, and a whole source gone wrong (its volume
collapsing, or its price level jumping as when a currency is misread).
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pandas as pd

from pipelines.normalize import OFFER_KINDS, PRICE_BOUNDS_CNY_PER_GPU_HOUR
from pipelines.quality.thresholds import (
    FUTURE_SKEW_MINUTES,
    MAX_PRICE_LEVEL_FACTOR,
    MIN_VOLUME_RATIO,
)
from spiders.parsing.currencies import KNOWN_CURRENCIES
from spiders.parsing.gpu_models import CANONICAL_MODELS, gpu_family
from spiders.parsing.machine import MAX_DISK_GB, MAX_MEMORY_GIB, MAX_VCPUS
from spiders.parsing.prices import HOURS_PER_PERIOD

REQUIRED_COLUMNS = ("observed_at", "observed_hour", "source", "vendor", "vendor_kind",
                    "region_code", "country", "sku", "gpu_model", "gpu_count", "gpu_fraction",
                    "vram_gb", "offer_kind", "billing_period", "price_amount", "currency",
                    "price_per_gpu_hour_cny", "price_per_gpu_hour_usd", "fx_rate_date", "url",
                    "raw_ref", "offer_id")
# The columns that name an offending row in a failure: of a batch row, of a source's level.
ROW_ID = ["source", "sku", "region_code", "offer_kind", "billing_period"]
SOURCE_ROW_ID = ["crawl_id", "source", "gpu_model"]


@dataclass(frozen=True)
class Expect:
    """One expectation: its class in great_expectations.expectations (`kind`) and its arguments.
    A suite is a list of these, built into GX's objects only where it is validated
    (gx_validate.py), so defining or fingerprinting a suite imports no GX (it takes longer to
    import than Dagster), and a suite crosses to the GX worker process as plain data."""
    kind: str
    kwargs: dict[str, Any] = field(default_factory=dict)


def expect(kind: str, **kwargs: Any) -> Expect:
    return Expect(kind, kwargs)


def observation_suite(now: datetime) -> list[Expect]:
    between, in_set = "ExpectColumnValuesToBeBetween", "ExpectColumnValuesToBeInSet"
    return [
        *(expect("ExpectColumnValuesToNotBeNull", column=c) for c in REQUIRED_COLUMNS),
        expect("ExpectCompoundColumnsToBeUnique", column_list=["offer_id", "observed_hour"]),
        expect(in_set, column="currency", value_set=sorted(KNOWN_CURRENCIES)),
        expect(in_set, column="gpu_model", value_set=list(CANONICAL_MODELS)),
        expect(in_set, column="offer_kind", value_set=list(OFFER_KINDS)),
        expect(in_set, column="billing_period", value_set=list(HOURS_PER_PERIOD)),
        expect(between, column="gpu_fraction", min_value=0, max_value=1, strict_min=True),
        expect(between, column="gpu_count", min_value=1),
        # the machine's specs, where stated (GX skips nulls): a misread, not a machine, past these
        *(expect(between, column=column, min_value=0, max_value=float(ceiling), strict_min=True)
          for column, ceiling in (("vcpus", MAX_VCPUS), ("memory_gib", MAX_MEMORY_GIB),
                                  ("disk_gb", MAX_DISK_GB))),
        *(expect(between, column=c, min_value=0, strict_min=True)
          for c in ("price_per_gpu_hour_cny", "price_per_gpu_hour_usd")),
        expect(between, column="observed_at",
               max_value=(now + timedelta(minutes=FUTURE_SKEW_MINUTES)).isoformat()),
        expect(in_set, column="price_within_card_bounds", value_set=[True]),
        expect(in_set, column="slice_price_plausible", value_set=[True]),
    ]


def source_suite() -> list[Expect]:
    between = "ExpectColumnValuesToBeBetween"
    return [
        expect(between, column="volume_ratio", min_value=MIN_VOLUME_RATIO),
        expect(between, column="price_level_ratio", min_value=1 / MAX_PRICE_LEVEL_FACTOR,
               max_value=MAX_PRICE_LEVEL_FACTOR),
    ]


def with_card_bounds(df: pd.DataFrame) -> pd.DataFrame:
    """`df` (the batch's rows) with `price_within_card_bounds`: each row's price checked against
    its card's plausible bounds (PRICE_BOUNDS_CNY_PER_GPU_HOUR, normalization's "bounds" stage,
    checked again here against a normalizer regression); False for a card not in the catalog."""
    bounds = df["gpu_model"].map(lambda m: PRICE_BOUNDS_CNY_PER_GPU_HOUR.get(gpu_family(m))
                                 if m in CANONICAL_MODELS else None)
    df["price_within_card_bounds"] = [
        b is not None and float(b[0]) <= p <= float(b[1])
        for b, p in zip(bounds, df["price_per_gpu_hour_cny"], strict=True)]
    return df
