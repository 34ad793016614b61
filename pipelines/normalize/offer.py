"""Raw offer -> one typed `observations` row, or a quarantine reason. Pure: no I/O.

The stages that judge one offer alone: item (every field's JSON type, item_types.py, first),
offer_kind, card, count, region, price, range, currency, effective_at and bounds (the card's
plausible price per GPU-hour).

One price unit compares everything: price_per_gpu_hour_* is the price of one whole-GPU
equivalent for one hour, i.e. the listed price turned hourly (HOURS_PER_PERIOD: a month is 730 h)
divided by gpu_count x gpu_fraction (by gpu_fraction alone when the price is one card's:
"￥8000/卡/月", "元/月/卡", a per-card column; never divided twice). The listed amount and
period stay on the row. A range ("20-30元/时") is a price only when the source declares which end
it lists (range_end); the count comes from the raw item or from the card/configuration text, and
when both are written they must agree.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation

from pipelines.normalize.count_cells import with_count_cell
from pipelines.normalize.item_types import check_item_types
from pipelines.normalize.quarantine import Quarantined
from spiders.parsing.calendars import offer_time_zone, source_time_zone
from spiders.parsing.card_catalog import CARDS
from spiders.parsing.counts import GpuCountError, gpu_count_in_text
from spiders.parsing.currencies import FxRateError, fx_rate, iso_currency
from spiders.parsing.gpu_models import (
    GpuParseError,
    GpuSpec,
    gpu_family,
    parse_gpu,
    vram_gb_of,
)
from spiders.parsing.machine import machine_specs
from spiders.parsing.prices import (
    HOURS_PER_PERIOD,
    RANGE_ENDS,
    PriceParseError,
    parse_price,
    per_hour,
)
from spiders.parsing.regions import RegionParseError, resolve_region
from spiders.parsing.slices import PlanGpus, plan_gpus, served_fraction
from spiders.parsing.units import PRICE_UNITS, UnitError, major_units
from spiders.price_basis import CRAWL_BASES

OFFER_KINDS = ("on_demand", "spot", "reserved")

# Plausible price per whole-GPU-hour in CNY, per card family, from spiders/parsing/card_catalog.csv
# (each row cites its evidence). They catch unit and currency slips (x1000 for 厘, x7 for
# USD<->CNY, a monthly price read as hourly) and a GPU count read as 1 on an 8-GPU server: the high
# bound is below 8x the card's typical price. A price divided by 8 twice is left to the batch's
# consistency check (spot prices reach a fifth of on-demand, so the low bound cannot be that tight).
PRICE_BOUNDS_CNY_PER_GPU_HOUR: dict[str, tuple[Decimal, Decimal]] = {
    card.family: (card.low_cny, card.high_cny) for card in CARDS}
# No listed amount is anywhere near this: a year of an 8-GPU server in the currency with the most
# digits per dollar (IDR) is about 3e9. A larger amount is a slip or hostile input, and it would
# overflow the 28-digit decimal arithmetic below, so it is quarantined as a price problem first.
MAX_PRICE_AMOUNT = Decimal(10) ** 12


@dataclass(frozen=True)
class _Listed:
    amount: Decimal
    currency: str
    period: str
    per_card: bool = False   # the listed price is for one card ("￥8000/卡/月"), not the machine
    per_machine: bool = False  # the unit says the whole machine's ("CNY/Machine/Day")
    unit_card: str | None = None  # the card the unit names ("RMB/V100·HOUR")


def _shown(value: object) -> str:
    """A value for a reason: its repr, cut short (a reason names the value, not a megabyte)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:50]}... ({len(text)} characters)"


def checked_amount(amount: Decimal, what: str, value: object) -> Decimal:
    """`amount` when it can be a price; a quarantine reason naming `value` otherwise."""
    if not amount.is_finite():
        raise Quarantined("price", f"{what} is not a finite number: {_shown(value)}")
    if amount <= 0:
        raise Quarantined("price", f"{what} must be positive, got {_shown(value)}")
    if amount > MAX_PRICE_AMOUNT:
        raise Quarantined("price", f"{what} {_shown(value)} is beyond any listed price "
                                   f"(above {MAX_PRICE_AMOUNT:,})")
    return amount


def _decimal(item: dict, field: str) -> Decimal | None:
    """An amount field (price_amount, price_low, price_high, list_price_amount) in its currency's
    major unit: converted here from the item's price_unit when the vendor serves another
    ("厘", "millicent", "cents": spiders/parsing/units.py), the one place a price unit is."""
    value = item.get(field)
    if value in (None, ""):
        return None
    # a value of the wrong JSON type (true, a list, an object) was refused at stage "item"
    if item.get("price_unit"):
        try:
            amount = major_units(value, item["price_unit"])
        except UnitError as exc:
            raise Quarantined("price", f"{field}: {exc}") from exc
        return checked_amount(amount, field, value)
    try:
        amount = Decimal(str(value))
    except InvalidOperation as exc:
        raise Quarantined("price", f"{field} is not a number: {_shown(value)}") from exc
    return checked_amount(amount, field, value)


def _amount_currency(item: dict) -> str:
    """The ISO currency of a stated amount: the item's, which a price_unit of another currency
    (厘 of a USD amount) contradicts."""
    if not item.get("currency"):
        raise Quarantined("currency", "price_amount without a currency")
    try:
        currency = iso_currency(item["currency"])
    except ValueError as exc:
        raise Quarantined("currency", str(exc)) from exc
    unit = PRICE_UNITS.get(item.get("price_unit") or "")
    if unit is not None and unit.currency not in (None, currency):
        raise Quarantined("currency", f"price_unit {item['price_unit']!r} is a unit of "
                                      f"{unit.currency}, not of {currency}")
    return currency


def _range_price(low: Decimal, high: Decimal, range_end: str | None, written: str) -> Decimal:
    """The end of a range the source declares it lists; a range without a declaration is kept
    whole in quarantine, never read as one of its ends."""
    if high <= low:
        raise Quarantined("price", f"range upper end not above lower end: {written}")
    if range_end is None:
        raise Quarantined("range", f"price range {written}: the source does not declare which "
                                   f"end it lists (range_end)")
    return low if range_end == "low" else high


def _listed_price(item: dict) -> _Listed:
    period = item.get("billing_period")
    range_end = item.get("range_end") or None
    if range_end not in (None, *RANGE_ENDS):
        raise Quarantined("range", f"unknown range_end {range_end!r} (expected low or high)")
    stated_per_card = item.get("price_per_card") is True
    low, high = _decimal(item, "price_low"), _decimal(item, "price_high")
    if item.get("price_amount") not in (None, "") or (low and high and not item.get("price_text")):
        amount = _decimal(item, "price_amount") or _range_price(
            low, high, range_end, f"{low}-{high} {item.get('currency')}")  # type: ignore[arg-type]
        # (a range given as two numbers, e.g. an API's min and max, and no price text)
        currency = _amount_currency(item)
        if period not in HOURS_PER_PERIOD:
            raise Quarantined("price", f"unknown billing period {period!r}")
        listed = _Listed(amount, currency, period, stated_per_card)
    else:
        try:
            parsed = parse_price(item.get("price_text") or "", default_period=period)
        except PriceParseError as exc:
            raise Quarantined("price", str(exc)) from exc
        if period not in HOURS_PER_PERIOD and parsed.period is None:
            raise Quarantined("price", f"unknown billing period {period!r}")
        amount = parsed.amount
        if parsed.is_range:
            amount = _range_price(parsed.price_low, parsed.price_high,  # type: ignore[arg-type]
                                  range_end, _shown(item.get("price_text")))
        amount = checked_amount(amount, "the price", item.get("price_text"))  # type: ignore[arg-type]
        listed = _Listed(amount, parsed.currency,  # type: ignore[arg-type]
                         parsed.period or period, parsed.per_card or stated_per_card,
                         parsed.per_machine, parsed.unit_card)
        # two readings: the flag the vendor states apart (a column, a note) against the text's
        if item.get("tax_included") is not None and parsed.tax_included is not None \
                and item["tax_included"] != parsed.tax_included:
            raise Quarantined("price", f"tax_included={item['tax_included']} but the price says "
                                       f"otherwise: {item.get('price_text')!r}")
        if parsed.list_amount is not None and item.get("list_price_amount") in (None, ""):
            return _checked_original(parsed.list_amount, listed)
    return _checked_original(_decimal(item, "list_price_amount"), listed)


def _checked_original(original: Decimal | None, listed: _Listed) -> _Listed:
    """The listed price, unless its original (struck-through) price is below it."""
    if original is not None and original < listed.amount:
        raise Quarantined("price", f"original price {original} below the current price "
                                   f"{listed.amount}")
    return listed


def _gpu_count(item: dict) -> int | None:
    """The stated count (a count column or API field), else the count the card or configuration
    text writes ("A100 80G ×8", "8卡整机"), else None. The texts are read here only (no spider
    reads a count out of them), so both stated and written are two readings: different ->
    quarantine."""
    value, plan = item.get("gpu_count"), _plan_gpus(item)
    if plan is not None and value in (None, ""):
        value = plan.count   # the count the offer's whole GPU memory says (slices.py)
    try:
        written = gpu_count_in_text(item.get("gpu_text"), item.get("config_text"))
    except GpuCountError as exc:
        raise Quarantined("count", str(exc)) from exc
    if value in (None, ""):
        return written
    try:
        count = int(Decimal(str(value).strip()))
    except (InvalidOperation, ValueError, OverflowError) as exc:
        raise Quarantined("card", f"gpu_count is not a number: {value!r}") from exc
    if count < 1:
        raise Quarantined("card", f"gpu_count must be at least 1, got {count}")
    if written is not None and written != count:
        texts = " / ".join(t for t in (item.get("gpu_text"), item.get("config_text")) if t)
        raise Quarantined("count", f"gpu_count {count} but the card text says {written} GPUs: "
                                   f"{texts!r}")
    return count


def _card(item: dict) -> GpuSpec:
    """The row's card: the configuration's reason when it names none (a partition no public
    evidence maps), else the card text, else the card the price's unit names ("GPU node" priced
    "1.00 RMB/V100·HOUR")."""
    if item.get("no_card_reason"):
        raise Quarantined("card", item["no_card_reason"])
    plan = _plan_gpus(item)
    hint = _vram_hint(item) if plan is None else plan.vram_gb_hint
    try:
        fraction = None if item.get("gpu_fraction") in (None, "") else \
            served_fraction(item["gpu_fraction"])
        return parse_gpu(item.get("gpu_text") or "", vram_gb_hint=hint, fraction=fraction,
                         slice_gb=plan and plan.slice_gb)
    except GpuParseError as exc:
        try:
            unit_card = parse_price(item.get("price_text") or "").unit_card
            if unit_card:
                return parse_gpu(unit_card, vram_gb_hint=hint)
        except (PriceParseError, GpuParseError):
            pass
        raise Quarantined("card", str(exc)) from exc


def _plan_gpus(item: dict) -> PlanGpus | None:
    """The cards or slice the offer's whole GPU memory says, when the API serves it."""
    if item.get("plan_vram") in (None, ""):
        return None
    try:
        return plan_gpus(item.get("gpu_text") or "", item["plan_vram"],
                         item.get("plan_vram_unit") or "")
    except GpuParseError as exc:
        raise Quarantined("card", str(exc)) from exc


def _vram_hint(item: dict) -> Decimal | str | float | None:
    """The card's or slice's memory the listing states apart from the card text: the typed
    vram in its vram_unit, converted here, else vram_gb (a number of GB, or a cell as written)."""
    if item.get("vram") in (None, ""):
        return item.get("vram_gb") or None
    try:
        return vram_gb_of(item["vram"], item.get("vram_unit") or "")
    except GpuParseError as exc:
        raise Quarantined("card", str(exc)) from exc


def _check_unit(listed: _Listed, gpu: GpuSpec, stated_count: int | None, item: dict) -> None:
    """A unit naming a card must name the row's; a machine's price needs the machine's card
    count, from the page or the configuration (never assumed to be one card)."""
    if listed.unit_card:
        try:
            named = gpu_family(parse_gpu(listed.unit_card).gpu_model)
        except GpuParseError as exc:
            raise Quarantined("price", f"the price's unit names {listed.unit_card!r}, no card "
                                       f"the catalog knows: {item.get('price_text')!r}") from exc
        if named != gpu_family(gpu.gpu_model):
            raise Quarantined("price", f"the price's unit names a {named} card-hour but the row's "
                                       f"card is {gpu.gpu_model}: {item.get('price_text')!r}")
    if listed.per_machine and stated_count is None:
        raise Quarantined("count", f"a price per machine ({item.get('price_text')!r}) but "
                                   "neither the page nor the configuration states the machine's "
                                   "card count")


def observation_time(item: dict) -> datetime:
    """When the price was observed, in UTC: the date the vendor states it took effect
    (effective_at, a dated price list) when there is one, else the crawl's observed_at. A date
    or time without a zone is read as UTC; an effective date that is not a date quarantines."""
    effective = item.get("effective_at")
    text = str(effective if effective not in (None, "") else item["observed_at"])
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        if effective in (None, ""):
            raise
        raise Quarantined("effective_at", f"effective_at is not an ISO date: {_shown(effective)}"
                          ) from exc
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)


def price_basis(item: dict) -> tuple[str | None, date | None]:
    """(price_basis, prices_as_of) the offer carries (spiders/price_basis.py); (None, None) for
    an item from before the fields. A basis not in CRAWL_BASES or a date that is not one is
    refused: a price's provenance is never guessed."""
    basis, as_of = item.get("price_basis"), item.get("prices_as_of")
    if basis is not None and basis not in CRAWL_BASES:
        raise Quarantined("price_basis", f"unknown price basis {_shown(basis)}")
    try:
        return basis, (date.fromisoformat(as_of[:10]) if as_of else None)
    except ValueError as exc:
        raise Quarantined("price_basis", f"prices_as_of is not an ISO date: {_shown(as_of)}"
                          ) from exc


def offer_id(*parts: object) -> str:
    """Stable id of an offer across observations: same vendor offer, same id."""
    return hashlib.sha256("|".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:20]


def normalize_offer(item: dict) -> dict:
    """The observation row for one raw offer; raises Quarantined with a readable reason."""
    check_item_types(item)   # before any stage reads a field as its type
    item = with_count_cell(item)
    offer_kind = item.get("offer_kind")
    if offer_kind not in OFFER_KINDS:
        raise Quarantined("offer_kind", f"unknown offer kind {offer_kind!r}")
    gpu = _card(item)
    stated_count = _gpu_count(item)
    gpu_count = stated_count or 1
    try:
        region = resolve_region(item.get("region_text") or "",
                                vendor=item.get("region_key") or item.get("source"))
    except RegionParseError as exc:
        raise Quarantined("region", str(exc)) from exc
    listed = _listed_price(item)
    _check_unit(listed, gpu, stated_count, item)
    if item.get("price_of_machine") is True and listed.per_card:   # the row lists the machine's
        listed = replace(listed, amount=listed.amount * gpu_count, per_card=False)

    observed_at = observation_time(item)
    hourly = per_hour(listed.amount, listed.period)
    cards_priced = 1 if listed.per_card else gpu_count
    per_gpu_hour = hourly / (cards_priced * gpu.gpu_fraction)
    try:
        to_cny, to_usd = (fx_rate(listed.currency, ccy, observed_at.date())
                          for ccy in ("CNY", "USD"))
    except FxRateError as exc:
        raise Quarantined("currency", str(exc)) from exc
    per_gpu_hour_cny = (per_gpu_hour * to_cny.rate).quantize(Decimal("0.000001"))
    per_gpu_hour_usd = (per_gpu_hour * to_usd.rate).quantize(Decimal("0.000001"))

    low, high = PRICE_BOUNDS_CNY_PER_GPU_HOUR[gpu_family(gpu.gpu_model)]
    if not low <= per_gpu_hour_cny <= high:
        raise Quarantined("bounds", f"{per_gpu_hour_cny} CNY per {gpu.gpu_model} GPU-hour is "
                                    f"outside the plausible range {low}-{high}")
    # FX dates: the rate for CNY is the one the row is compared in; both come from the same ECB day
    # except when one side is the listing currency itself (rate 1 on the observation day).
    fx_rate_date = min(to_cny.rate_date, to_usd.rate_date)
    basis, as_of = price_basis(item)
    return {
        "observed_at": observed_at,
        "observed_hour": observed_at.replace(minute=0, second=0, microsecond=0),
        "source": item["source"],
        "vendor": item["vendor"],
        "vendor_kind": item["vendor_kind"],
        # how the source reached the offer (the spider's reaches_via): direct, or aggregator /
        # second_path / archive, which the SQL models count once (docs/signals.md)
        "reaches_via": item.get("reaches_via") or "direct",
        # where its price comes from and the date it held (the snapshot entry's, or live)
        "price_basis": basis,
        "prices_as_of": as_of,
        # the zone its days and month ends are counted in: the spider's, an offer in China's
        "local_time_zone": offer_time_zone(
            region.country, source_time_zone(item["source"], item.get("local_time_zone"))),
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
        # vcpus, memory_gib, disk_gb: the machine, where the source states it (else None)
        **machine_specs(item),
    }
