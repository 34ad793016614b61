"""Constants and the error type shared by the simulator's modules."""

from __future__ import annotations

TIER1_PROVINCES = ("Beijing", "Shanghai", "Guangdong")   # provinces holding a tier-1 city
DEFAULT_DB_NAME = "simulated.db"
CHUNK_ROWS = 500_000          # rows built and inserted at a time
NOISE_PCT = 1.0               # default bound of the price noise, +/- % of the real price
CLONE_JITTER_PCT = 3.0        # --scale clones: base price within +/- this % of the original

# The columns an offer carries into every one of its observations (observations minus the
# per-observation ones: observed_at, observed_hour, crawl_id).
OFFER_COLUMNS = (
    "source", "vendor", "vendor_kind", "region_code", "country", "province_or_state", "city",
    "is_tier1_city", "sku", "gpu_model", "gpu_variant", "gpu_count", "gpu_fraction", "vram_gb",
    "offer_kind", "billing_period", "price_amount", "currency", "price_per_gpu_hour_cny",
    "price_per_gpu_hour_usd", "fx_rate_date", "available", "url", "raw_ref", "offer_id",
    "vcpus", "memory_gib", "disk_gb", "reaches_via", "local_time_zone",
)
# The machine's specs: optional in an offers table (null when not given), as in observations;
# so is how the source reached the offer (null: direct, as in observations).
MACHINE_COLUMNS = ("vcpus", "memory_gib", "disk_gb")
OPTIONAL_COLUMNS = (*MACHINE_COLUMNS, "reaches_via", "local_time_zone")


class SimulationError(ValueError):
    """The simulation cannot run as asked (a protected file, an unknown source, no offers ...)."""


