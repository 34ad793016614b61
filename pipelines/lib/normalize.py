"""Raw offer -> one typed `observations` row, or a quarantine reason. Pure: no I/O.

One price unit compares everything: price_per_gpu_hour_* is the price of one whole-GPU
equivalent for one hour, i.e. the listed price turned hourly (HOURS_PER_PERIOD: a month is 730 h)
divided by gpu_count x gpu_fraction (by gpu_fraction alone when the price is written per card,
"￥8000/卡/月"). The listed amount and period stay on the row.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation

from spiders.parsing.currencies import FxRateError, fx_rate, iso_currency
from spiders.parsing.gpu_models import GpuParseError, gpu_family, parse_gpu
from spiders.parsing.prices import HOURS_PER_PERIOD, PriceParseError, parse_price, per_hour
from spiders.parsing.regions import RegionParseError, resolve_region

OFFER_KINDS = ("on_demand", "spot", "reserved")

# Plausible price per whole-GPU-hour in CNY, per card family. Wide on purpose: they catch unit
# and currency slips (x1000 for 厘, x7 for USD<->CNY, a monthly price read as hourly), not market
# moves. Reference points: ../shared/reference (A100 0.76-4.85 USD/h, H100 1.87-12.74 USD/h,
# RTX 4090 0.35-0.74 USD/h) and the Chinese IDC ranges in DESIGN.md (A100 80 GB 50-80 CNY/h).
PRICE_BOUNDS_CNY_PER_GPU_HOUR: dict[str, tuple[Decimal, Decimal]] = {
    "A100": (Decimal("1"), Decimal("250")),
    "H100": (Decimal("2"), Decimal("400")),
    "H800": (Decimal("2"), Decimal("400")),
    "RTX4090": (Decimal("0.3"), Decimal("40")),
    "RTX4090D": (Decimal("0.3"), Decimal("40")),
}


class Quarantined(Exception):
    """An offer that cannot become an observation; `stage` says which step refused it."""

    def __init__(self, stage: str, reason: str) -> None:
        super().__init__(f"{stage}: {reason}")
        self.stage = stage
        self.reason = reason


@dataclass(frozen=True)
class _Listed:
    amount: Decimal
    currency: str
    period: str
    per_card: bool = False   # the listed price is for one card ("￥8000/卡/月"), not the machine


def _listed_price(item: dict) -> _Listed:
    period = item.get("billing_period")
    if item.get("price_amount") not in (None, ""):
        try:
            amount = Decimal(str(item["price_amount"]))
        except InvalidOperation as exc:
            raise Quarantined("price", f"price_amount is not a number: {item['price_amount']!r}") from exc
        if not item.get("currency"):
            raise Quarantined("currency", "price_amount without a currency")
        if amount <= 0:
            raise Quarantined("price", f"price must be positive, got {amount}")
        try:
            currency = iso_currency(item["currency"])
        except ValueError as exc:
            raise Quarantined("currency", str(exc)) from exc
    else:
        try:
            parsed = parse_price(item.get("price_text") or "", default_period=period)
        except PriceParseError as exc:
            raise Quarantined("price", str(exc)) from exc
        if period not in HOURS_PER_PERIOD and parsed.period is None:
            raise Quarantined("price", f"unknown billing period {period!r}")
        return _Listed(parsed.amount, parsed.currency, parsed.period or period, parsed.per_card)
    if period not in HOURS_PER_PERIOD:
        raise Quarantined("price", f"unknown billing period {period!r}")
    return _Listed(amount, currency, period)


def _gpu_count(value: object) -> int:
    text = str(value if value not in (None, "") else 1).strip()
    try:
        count = int(Decimal(text))
    except InvalidOperation as exc:
        raise Quarantined("card", f"gpu_count is not a number: {value!r}") from exc
    if count < 1:
        raise Quarantined("card", f"gpu_count must be at least 1, got {count}")
    return count


def offer_id(*parts: object) -> str:
    """Stable id of an offer across observations: same vendor offer, same id."""
    return hashlib.sha256("|".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:20]


def normalize_offer(item: dict) -> dict:
    """The observation row for one raw offer; raises Quarantined with a readable reason."""
    offer_kind = item.get("offer_kind")
    if offer_kind not in OFFER_KINDS:
        raise Quarantined("offer_kind", f"unknown offer kind {offer_kind!r}")
    try:
        gpu = parse_gpu(item.get("gpu_text") or "", vram_gb_hint=item.get("vram_gb") or None)
    except GpuParseError as exc:
        raise Quarantined("card", str(exc)) from exc
    gpu_count = _gpu_count(item.get("gpu_count"))
    try:
        region = resolve_region(item.get("region_text") or "", vendor=item.get("source"))
    except RegionParseError as exc:
        raise Quarantined("region", str(exc)) from exc
    listed = _listed_price(item)

    observed_at = datetime.fromisoformat(item["observed_at"].replace("Z", "+00:00")).astimezone(UTC)
    hourly = per_hour(listed.amount, listed.period)
    cards_priced = 1 if listed.per_card else gpu_count
    per_gpu_hour = hourly / (cards_priced * gpu.gpu_fraction)
    try:
        to_cny, to_usd = (fx_rate(listed.currency, ccy, observed_at.date()) for ccy in ("CNY", "USD"))
    except FxRateError as exc:
        raise Quarantined("currency", str(exc)) from exc
    per_gpu_hour_cny = (per_gpu_hour * to_cny.rate).quantize(Decimal("0.000001"))
    per_gpu_hour_usd = (per_gpu_hour * to_usd.rate).quantize(Decimal("0.000001"))

    low, high = PRICE_BOUNDS_CNY_PER_GPU_HOUR[gpu_family(gpu.gpu_model)]
    if not low <= per_gpu_hour_cny <= high:
        raise Quarantined("bounds", f"{per_gpu_hour_cny} CNY per {gpu.gpu_model} GPU-hour is outside "
                                    f"the plausible range {low}-{high}")
    # FX dates: the rate for CNY is the one the row is compared in; both come from the same ECB day
    # except when one side is the listing currency itself (rate 1 on the observation day).
    fx_rate_date = min(to_cny.rate_date, to_usd.rate_date)
    return {
        "observed_at": observed_at,
        "observed_hour": observed_at.replace(minute=0, second=0, microsecond=0),
        "source": item["source"],
        "vendor": item["vendor"],
        "vendor_kind": item["vendor_kind"],
        "region_code": region.region_code,
        "country": region.country,
        "province_or_state": region.province_or_state,
        "city": region.city,
        "is_tier1_city": region.is_tier1_city,
        "sku": item["sku"],
        "gpu_model": gpu.gpu_model,
        "gpu_variant": gpu.gpu_variant,
        "gpu_count": gpu_count,
        "gpu_fraction": gpu.gpu_fraction,
        "vram_gb": gpu.vram_gb,
        "offer_kind": offer_kind,
        "billing_period": listed.period,
        "price_amount": listed.amount,
        "currency": listed.currency,
        "price_per_gpu_hour_cny": per_gpu_hour_cny,
        "price_per_gpu_hour_usd": per_gpu_hour_usd,
        "fx_rate_date": fx_rate_date,
        "available": item.get("available"),
        "url": item["url"],
        "raw_ref": item["raw_ref"],
        "offer_id": offer_id(item["source"], item["sku"], region.region_code, offer_kind,
                             listed.period, gpu.gpu_model, gpu.gpu_fraction),
    }
