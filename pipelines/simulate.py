"""`gpuprices simulate`: months of realistic hourly observations with known effects, in a DuckDB
file of their own, so that every signal can be tested against a known truth.

The offers are real: the latest offers of an existing database (`marts.latest_prices`), or the
bundled snapshots crawled in replay mode and normalized by the real code. Each offer's price then
follows its real price with small noise, and the effects that are switched on (a month-end dip, a
regional gap, a price drop) are injected exactly. The rows have the `observations` schema and one
`raw.crawls` row per source and crawl hour, so the SQL models run on the simulated history
unchanged. See docs/simulator.md.

Everything random is a counter-based hash of (seed, offer_id, hour): an offer's price at an hour
does not depend on the other offers, on the start of the simulation or on the chunking, so the same
seed gives the same table and `append_hour` continues a history exactly as a longer simulation would
have written it. Rows are built with numpy per block of hours and inserted by DuckDB in chunks.
"""

from __future__ import annotations

import calendar
import hashlib
import math
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import click
import duckdb
import numpy as np
import pandas as pd

from pipelines.lib.db import DUCKDB_CONFIG, ensure_schema, transaction
from spiders.parsing.prices import HOURS_PER_PERIOD

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
)


class SimulationError(ValueError):
    """The simulation cannot run as asked (a protected file, an unknown source, no offers ...)."""


# --------------------------------------------------------------------------------------------
# Effects
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MonthEndDip:
    """Prices of `sources` (None: every source) are `size_pct` % lower during the last `days` UTC
    days of every month; with `availability`, every offer that states its stock is in stock then."""

    size_pct: float
    sources: tuple[str, ...] | None = None
    days: int = 5
    availability: bool = False

    def __post_init__(self) -> None:
        if not 0 < self.size_pct < 100:
            raise SimulationError(f"month-end dip: size must be between 0 and 100 %, "
                                  f"got {self.size_pct}")
        if not 1 <= self.days <= 28:
            raise SimulationError(f"month-end dip: days must be 1-28, got {self.days}")

    @classmethod
    def parse(cls, spec: str, availability: bool = False) -> MonthEndDip:
        """`SIZE_PCT[:SOURCES][:DAYS]`, e.g. `8:autodl_cn,idc_ulanqab:5`, `8` or `8::3`."""
        parts = spec.split(":")
        if len(parts) > 3 or not parts[0].strip():
            raise SimulationError(f"month-end dip {spec!r}: expected SIZE_PCT[:SOURCES][:DAYS]")
        try:
            size = float(parts[0])
            days = int(parts[2]) if len(parts) > 2 and parts[2].strip() else 5
        except ValueError as exc:
            raise SimulationError(f"month-end dip {spec!r}: {exc}") from exc
        sources = _split_names(parts[1]) if len(parts) > 1 else None
        return cls(size, sources or None, days, availability)

    def applies_to(self, sources: np.ndarray) -> np.ndarray:
        if self.sources is None:
            return np.ones(len(sources), dtype=bool)
        return np.isin(sources, list(self.sources))


@dataclass(frozen=True)
class RegionalGap:
    """Offers in `province` (China) cost `pct` % less than the tier-1 cities (Beijing, Shanghai,
    Guangzhou, Shenzhen) for the same card, offer kind and billing period.

    The province's offers of each card/kind/period are scaled by one factor so that the province's
    median price per GPU-hour (a median of per-vendor medians, whole cards) is exactly
    (1 - pct/100) x the tier-1 median computed the same way; their relative prices (servers,
    slices, vendors) stay as they were. A card/kind/period without a tier-1 whole-card offer, or
    without a whole-card offer in the province, is left as it is."""

    province: str
    pct: float

    def __post_init__(self) -> None:
        if not -100 < self.pct < 100:
            raise SimulationError(f"regional gap: pct must be between -100 and 100, got {self.pct}")
        if self.province.strip().lower() in {p.lower() for p in TIER1_PROVINCES}:
            raise SimulationError(f"regional gap: {self.province} holds a tier-1 city (the "
                                  "reference itself); pick another province")

    @classmethod
    def parse(cls, spec: str) -> RegionalGap:
        """`PROVINCE:PCT`, e.g. `Inner Mongolia:25`."""
        province, sep, pct = spec.rpartition(":")
        if not sep or not province.strip():
            raise SimulationError(f"regional gap {spec!r}: expected PROVINCE:PCT")
        try:
            return cls(province.strip(), float(pct))
        except ValueError as exc:
            raise SimulationError(f"regional gap {spec!r}: {exc}") from exc


@dataclass(frozen=True)
class PriceDrop:
    """From `at` on (observed_at >= at), every price of `source` is `pct` % lower (negative: a
    rise)."""

    source: str
    pct: float
    at: datetime

    def __post_init__(self) -> None:
        if not -100 < self.pct < 100:
            raise SimulationError(f"price drop: pct must be between -100 and 100, got {self.pct}")
        if self.at.tzinfo is None:
            object.__setattr__(self, "at", self.at.replace(tzinfo=UTC))

    @classmethod
    def parse(cls, spec: str) -> PriceDrop:
        """`SOURCE:PCT:ISO_TIME`, e.g. `autodl_cn:10:2026-07-15T12:00` (UTC unless offset)."""
        parts = spec.split(":", 2)
        if len(parts) != 3:
            raise SimulationError(f"price drop {spec!r}: expected SOURCE:PCT:ISO_TIME")
        try:
            return cls(parts[0].strip(), float(parts[1]), datetime.fromisoformat(parts[2].strip()))
        except ValueError as exc:
            raise SimulationError(f"price drop {spec!r}: {exc}") from exc


Effect = MonthEndDip | RegionalGap | PriceDrop


def _split_names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())


# --------------------------------------------------------------------------------------------
# Offers
# --------------------------------------------------------------------------------------------

def offers_from_db(db_path: str | Path, sources: Sequence[str] | None = None) -> pd.DataFrame:
    """The latest offers of an existing gpuprices database (`marts.latest_prices`), read-only."""
    path = Path(db_path)
    if not path.exists():
        raise SimulationError(f"{path}: no such database")
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        raise SimulationError(f"{path}: cannot open read-only ({exc})") from exc
    try:
        columns = [c for c in OFFER_COLUMNS if c != "raw_ref"]
        df = con.execute(f"select {', '.join(columns)} from marts.latest_prices "
                         "order by source, offer_id").df()
    except duckdb.CatalogException as exc:
        raise SimulationError(f"{path}: no marts.latest_prices (run `gpuprices run` first)"
                              ) from exc
    finally:
        con.close()
    df["raw_ref"] = "simulated"
    return _select_sources(df, sources)


def offers_from_snapshots(sources: Sequence[str] | None = None, *, workers: int = 4,
                          on_source: Callable[[str, str, int], None] | None = None
                          ) -> pd.DataFrame:
    """Crawl the bundled snapshots offline (replay mode, the real spiders) and normalize each offer
    with the real normalizer; quarantined offers are skipped, an offer seen twice is kept once.
    `on_source(source, status, offers)` is called as each source finishes (status "passed", or
    "failed: <why>" / "skipped: <why>"; such a source contributes no offer)."""
    import json

    from pipelines.lib.normalize import Quarantined, normalize_offer
    from pipelines.resources import CrawlerResource
    from spiders.registry import source_names

    known = source_names()
    wanted = list(sources) if sources else known
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        raise SimulationError(f"unknown source(s) {', '.join(unknown)}; known: {', '.join(known)}")
    rows: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="gpuprices-sim-") as tmp:
        crawler = CrawlerResource(mode="replay", data_dir=tmp)

        def crawl(source: str) -> None:
            result = crawler.crawl(source, f"sim-offers-{source}")
            kept: list[dict] = []
            if result.passed and result.items_path.exists():
                seen = set()
                for line in result.items_path.read_text(encoding="utf-8").splitlines():
                    try:
                        row = normalize_offer(json.loads(line))
                    except Quarantined:
                        continue
                    if row["offer_id"] not in seen:
                        seen.add(row["offer_id"])
                        kept.append(row)
            rows[source] = kept
            if on_source:
                status = result.status
                if result.failures:
                    status += ": " + "; ".join(result.failures)[:300]
                on_source(source, status, len(kept))

        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            list(pool.map(crawl, wanted))
    flat = [r for s in wanted for r in rows.get(s, [])]
    if not flat:
        raise SimulationError("no offer could be normalized from the snapshots of "
                              f"{', '.join(wanted)}")
    df = pd.DataFrame(flat)
    df["raw_ref"] = "simulated"
    return df[list(OFFER_COLUMNS)]


def scale_offers(offers: pd.DataFrame, scale: int, seed: int = 0) -> pd.DataFrame:
    """Each offer plus `scale - 1` synthetic clones (sku and offer_id suffixed `#k`), each clone's
    price within +/- CLONE_JITTER_PCT % of the original (seeded): volume for benchmarks."""
    if scale < 1:
        raise SimulationError(f"scale must be at least 1, got {scale}")
    offers = _as_frame(offers)
    if scale == 1:
        return offers
    copies = [offers]
    for k in range(1, scale):
        clone = offers.copy()
        clone["sku"] = clone["sku"] + f"#{k}"
        clone["offer_id"] = clone["offer_id"] + f"#{k}"
        keys = _offer_keys(clone["offer_id"], seed)
        jitter = 1 + CLONE_JITTER_PCT / 100 * (2 * _uniform(keys, np.uint64(0xC10E)) - 1)
        for col in ("price_amount", "price_per_gpu_hour_cny", "price_per_gpu_hour_usd"):
            clone[col] = [Decimal(str(round(float(v) * j, 6))) for v, j in zip(clone[col], jitter)]
        copies.append(clone)
    return pd.concat(copies, ignore_index=True)


def load_offers(*, offers_from: str | Path | None = None, sources: Sequence[str] | None = None,
                scale: int = 1, seed: int = 0,
                on_source: Callable[[str, str, int], None] | None = None) -> pd.DataFrame:
    """The offers a simulation starts from: an existing database's latest prices when
    `offers_from` is given, else the bundled snapshots; restricted to `sources`, scaled."""
    if offers_from is not None:
        df = offers_from_db(offers_from, sources)
    else:
        df = offers_from_snapshots(sources, on_source=on_source)
    return scale_offers(df, scale, seed)


def _select_sources(df: pd.DataFrame, sources: Sequence[str] | None) -> pd.DataFrame:
    if not sources:
        return df
    unknown = sorted(set(sources) - set(df["source"]))
    if unknown:
        raise SimulationError(f"no offers of source(s) {', '.join(unknown)}; the offers have: "
                              f"{', '.join(sorted(set(df['source'])))}")
    return df[df["source"].isin(list(sources))].reset_index(drop=True)


def _as_frame(offers: pd.DataFrame | Iterable[dict]) -> pd.DataFrame:
    df = offers.copy() if isinstance(offers, pd.DataFrame) else pd.DataFrame(list(offers))
    if df.empty:
        raise SimulationError("no offers to simulate")
    if "raw_ref" not in df:
        df["raw_ref"] = "simulated"
    missing = [c for c in OFFER_COLUMNS if c not in df]
    if missing:
        raise SimulationError(f"offers lack column(s): {', '.join(missing)}")
    df = df[list(OFFER_COLUMNS)].reset_index(drop=True)
    duplicated = df["offer_id"].duplicated()
    if duplicated.any():
        df = df[~duplicated].reset_index(drop=True)   # one offer, one series (like the pipeline)
    return df


# --------------------------------------------------------------------------------------------
# Counter-based randomness: uniform(key, counter) in [0, 1), vectorized, platform independent
# --------------------------------------------------------------------------------------------

_U64 = np.uint64


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer over uint64 arrays (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        x = x + _U64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> _U64(27))) * _U64(0x94D049BB133111EB)
        return x ^ (x >> _U64(31))


def _uniform(key, counter) -> np.ndarray:
    """A uniform [0, 1) draw for each (key, counter) pair, broadcast like numpy."""
    k = np.asarray(key, dtype=np.uint64)
    c = np.asarray(counter, dtype=np.int64).view(np.uint64)
    return (_mix(k ^ _mix(c)) >> _U64(11)).astype(np.float64) * 2.0 ** -53


def _offer_keys(offer_ids: Iterable[str], seed: int) -> np.ndarray:
    return np.array([int.from_bytes(hashlib.sha256(f"{seed}|{o}".encode()).digest()[:8], "little")
                     for o in offer_ids], dtype=np.uint64)


# Salts: independent streams per purpose.
_S_KNOT, _S_PHASE, _S_LEVEL, _S_ABLOCK, _S_APHASE, _S_AVAIL, _S_OFFSET = (
    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77)
_LEVEL_WINDOW = 4   # the noise level is a moving average of this many knot draws: a slow walk


# --------------------------------------------------------------------------------------------
# The plan: per-offer constants, computed once from the offers and the effects
# --------------------------------------------------------------------------------------------

@dataclass
class _Plan:
    offers: pd.DataFrame          # OFFER_COLUMNS + oi, cny_factor, usd_factor (for the SQL side)
    sources: list[str]
    source_idx: np.ndarray        # (N,) index into sources
    source_keys: np.ndarray       # (S,) uint64
    base_amount: np.ndarray       # (N,) listed amount the noise moves around (effects included)
    tick: np.ndarray              # (N,) the listed price's resolution
    knot_hours: np.ndarray        # (N,) hours between price revisions
    knot_phase: np.ndarray
    avail_hours: np.ndarray       # (N,) length of a stock block
    avail_phase: np.ndarray
    p_unavailable: np.ndarray     # (N,) chance a block is sold out
    avail_stated: np.ndarray      # (N,) bool: the vendor states stock (else available is null)
    keys: np.ndarray              # (N,) uint64
    noise: float                  # fraction, e.g. 0.01
    dips: list[tuple[MonthEndDip, np.ndarray]]
    drops: list[tuple[PriceDrop, np.ndarray]]
    gap_notes: list[str] = field(default_factory=list)


def _decimal_tick(value) -> float:
    """Resolution of a listed price: 4 significant digits, finer if the real price is finer."""
    amount = float(value)
    sig = 10.0 ** (math.floor(math.log10(amount)) - 3)
    exponent = Decimal(str(value)).normalize().as_tuple().exponent
    return min(sig, 10.0 ** int(exponent))


def _fx(currency: str, to: str, on) -> float | None:
    from spiders.parsing.currencies import FxRateError, fx_rate
    try:
        return float(fx_rate(currency, to, pd.Timestamp(on).date()).rate)
    except (FxRateError, ValueError):
        return None


def _plan(offers: pd.DataFrame | Iterable[dict], effects: Sequence[Effect], seed: int,
          noise_pct: float) -> _Plan:
    df = _as_frame(offers)
    n = len(df)
    amount = df["price_amount"].astype(float).to_numpy()
    if (amount <= 0).any():
        raise SimulationError("offers need positive prices")
    hours = df["billing_period"].map(lambda p: float(HOURS_PER_PERIOD[p])).to_numpy()
    count = df["gpu_count"].astype(float).to_numpy()
    fraction = df["gpu_fraction"].astype(float).to_numpy()
    per_gpu_cny = df["price_per_gpu_hour_cny"].astype(float).to_numpy()
    per_gpu_usd = df["price_per_gpu_hour_usd"].astype(float).to_numpy()

    # The exchange rates the real normalizer used (same ECB day), falling back to the row's ratio.
    rates: dict[tuple[str, str, str], float | None] = {}
    fx_cny, fx_usd = np.empty(n), np.empty(n)
    for i, (ccy, day) in enumerate(zip(df["currency"], df["fx_rate_date"])):
        for target, out in (("CNY", fx_cny), ("USD", fx_usd)):
            key = (ccy, target, str(day))
            if key not in rates:
                rates[key] = _fx(ccy, target, day)
            out[i] = np.nan if rates[key] is None else rates[key]
    # Units the listed price is for: gpu_count x fraction, or the fraction alone when the price
    # was written per card ("/卡/月"): whichever reproduces the row's own per-GPU-hour price.
    units = count * fraction
    implied = amount * np.where(np.isnan(fx_cny), 1.0, fx_cny) / (hours * per_gpu_cny)
    per_card = (count > 1) & (np.abs(implied / fraction - 1) < 1e-3)
    units = np.where(per_card, fraction, units)
    fx_cny = np.where(np.isnan(fx_cny), per_gpu_cny * hours * units / amount, fx_cny)
    fx_usd = np.where(np.isnan(fx_usd), per_gpu_usd * hours * units / amount, fx_usd)
    cny_factor = fx_cny / (hours * units)     # listed amount -> CNY per GPU-hour
    usd_factor = fx_usd / (hours * units)

    keys = _offer_keys(df["offer_id"], seed)
    kind = df["vendor_kind"].to_numpy()
    spot = (df["offer_kind"] == "spot").to_numpy()
    # How often prices are revised: spot and marketplaces within days, list prices of
    # hyperscalers over months, GPU clouds and IDCs within weeks.
    lo = np.where(spot | (kind == "marketplace"), 6, np.where(kind == "hyperscaler", 336, 48))
    hi = np.where(spot | (kind == "marketplace"), 48, np.where(kind == "hyperscaler", 2160, 336))
    knot_hours = (lo + np.floor(_uniform(keys, _S_KNOT) * (hi - lo + 1))).astype(np.int64)
    knot_phase = np.floor(_uniform(keys, _S_PHASE) * knot_hours).astype(np.int64)
    avail_hours = (12 + np.floor(_uniform(keys, _S_ABLOCK) * 61)).astype(np.int64)
    avail_phase = np.floor(_uniform(keys, _S_APHASE) * avail_hours).astype(np.int64)
    stated = df["available"].map(lambda v: v is not None and not pd.isna(v)).to_numpy(bool)
    in_stock = df["available"].map(lambda v: bool(v) if v is not None and not pd.isna(v)
                                   else True).to_numpy(bool)
    p_unavailable = np.where(in_stock, 0.05, 0.6)   # sold-out offers mostly stay sold out

    sources_arr = df["source"].to_numpy()
    known_sources = sorted(set(sources_arr))
    dips, drops, gap_notes = [], [], []
    base = amount.copy()
    for effect in effects:
        if isinstance(effect, MonthEndDip):
            unknown = sorted(set(effect.sources or ()) - set(known_sources))
            if unknown:
                raise SimulationError(f"month-end dip: no offers of source(s) {', '.join(unknown)}"
                                      f"; sources: {', '.join(known_sources)}")
            dips.append((effect, effect.applies_to(sources_arr)))
        elif isinstance(effect, PriceDrop):
            if effect.source not in known_sources:
                raise SimulationError(f"price drop: no offers of source {effect.source!r}; "
                                      f"sources: {', '.join(known_sources)}")
            drops.append((effect, sources_arr == effect.source))
        elif isinstance(effect, RegionalGap):
            gap_notes += _apply_gap(df, effect, base, cny_factor)
        else:
            raise SimulationError(f"unknown effect {effect!r}")

    source_idx = np.searchsorted(np.array(known_sources), sources_arr)
    sql_offers = df.copy()
    sql_offers.insert(0, "oi", np.arange(n, dtype=np.int32))
    sql_offers["gpu_count"] = sql_offers["gpu_count"].astype(int)
    for col in ("gpu_fraction", "vram_gb"):
        sql_offers[col] = sql_offers[col].astype(float)
    sql_offers["fx_rate_date"] = sql_offers["fx_rate_date"].map(
        lambda d: str(pd.Timestamp(d).date()))
    sql_offers["is_tier1_city"] = sql_offers["is_tier1_city"].astype(bool)
    for col in ("price_amount", "price_per_gpu_hour_cny", "price_per_gpu_hour_usd", "available"):
        del sql_offers[col]
    for col in ("province_or_state", "city", "gpu_variant"):
        sql_offers[col] = sql_offers[col].map(lambda v: None if v is None or pd.isna(v) else str(v))
    sql_offers["cny_factor"] = cny_factor
    sql_offers["usd_factor"] = usd_factor
    return _Plan(
        offers=sql_offers, sources=known_sources, source_idx=source_idx,
        source_keys=_offer_keys([f"source|{s}" for s in known_sources], seed),
        base_amount=base, tick=np.array([_decimal_tick(v) for v in df["price_amount"]]),
        knot_hours=knot_hours, knot_phase=knot_phase, avail_hours=avail_hours,
        avail_phase=avail_phase, p_unavailable=p_unavailable, avail_stated=stated, keys=keys,
        noise=noise_pct / 100, dips=dips, drops=drops, gap_notes=gap_notes)


def _median_of_vendor_medians(cny: np.ndarray, vendors: np.ndarray) -> float:
    return float(np.median([np.median(cny[vendors == v]) for v in np.unique(vendors)]))


def _apply_gap(df: pd.DataFrame, gap: RegionalGap, base: np.ndarray,
               cny_factor: np.ndarray) -> list[str]:
    """Scale the province's offers (in place, in `base`) per card/kind/period; returns notes on
    what could not be gapped."""
    cn = (df["country"] == "CN").to_numpy()
    province = df["province_or_state"].fillna("").str.lower().to_numpy()
    target = cn & (province == gap.province.lower())
    if not target.any():
        provinces = sorted(set(df.loc[cn, "province_or_state"].dropna()))
        raise SimulationError(f"regional gap: no offers in {gap.province!r}; Chinese provinces "
                              f"in the offers: {', '.join(provinces) or 'none'}")
    tier1 = cn & df["is_tier1_city"].astype(bool).to_numpy()
    whole = df["gpu_fraction"].astype(float).to_numpy() == 1
    cny = base * cny_factor
    vendors = df["vendor"].to_numpy()
    group = (df["gpu_model"] + "|" + df["offer_kind"] + "|" + df["billing_period"]).to_numpy()
    notes = []
    for key in sorted(set(group[target])):
        in_key = group == key
        ref, own = tier1 & whole & in_key, target & whole & in_key
        if not ref.any() or not own.any():
            why = "no tier-1 whole-card offer" if not ref.any() else "no whole-card offer there"
            notes.append(f"{gap.province} {key.replace('|', ' ')}: not gapped ({why})")
            continue
        reference = _median_of_vendor_medians(cny[ref], vendors[ref])
        current = _median_of_vendor_medians(cny[own], vendors[own])
        base[target & in_key] *= (1 - gap.pct / 100) * reference / current
    return notes


# --------------------------------------------------------------------------------------------
# Building rows
# --------------------------------------------------------------------------------------------

def _hour_of(value: datetime) -> int:
    """Epoch hours of an aware (or UTC-naive) datetime; it must be on the hour."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    seconds = int(value.timestamp())
    if seconds % 3600:
        raise SimulationError(f"{value.isoformat()} is not on the hour")
    return seconds // 3600


def _month_end_window(hours: np.ndarray, days: int) -> np.ndarray:
    """(T,) bool: the hour falls in the last `days` UTC days of its month."""
    stamp = hours.astype("datetime64[h]")
    day = stamp.astype("datetime64[D]")
    month = stamp.astype("datetime64[M]")
    first_day = month.astype("datetime64[D]")
    day_of_month = (day - first_day).astype(np.int64) + 1
    month_days = ((month + 1).astype("datetime64[D]") - first_day).astype(np.int64)
    return day_of_month > month_days - days


def _crawl_times(plan: _Plan, hours: np.ndarray) -> np.ndarray:
    """(T, S) epoch seconds each source's crawl saw its offers: 1-15 minutes past the hour."""
    offset = 60 + np.floor(_uniform(plan.source_keys ^ _U64(_S_OFFSET), hours[:, None]) * 840)
    return hours[:, None] * 3600 + offset.astype(np.int64)


def _block(plan: _Plan, hours: np.ndarray) -> dict[str, np.ndarray]:
    """Every offer at every hour in `hours` (epoch hours): arrays shaped (T, N), hour-major."""
    h = hours[:, None]
    n_offers = len(plan.keys)
    # Price level: revised every knot_hours; a moving average of knot draws, so it wanders slowly
    # within +/- noise.
    knot = (h + plan.knot_phase) // plan.knot_hours
    level = np.zeros((len(hours), n_offers))
    for j in range(_LEVEL_WINDOW):
        level += 2 * _uniform(plan.keys ^ _U64(_S_LEVEL), knot - j) - 1
    level = np.clip(level * (2 / _LEVEL_WINDOW), -1, 1) * plan.noise
    factor = 1 + level

    observed_s = _crawl_times(plan, hours)[:, plan.source_idx]   # each source's fetch time

    sold_out = _uniform(plan.keys ^ _U64(_S_AVAIL),
                        (h + plan.avail_phase) // plan.avail_hours) < plan.p_unavailable
    for dip, members in plan.dips:
        window = _month_end_window(hours, dip.days)[:, None] & members
        factor = np.where(window, factor * (1 - dip.size_pct / 100), factor)
        if dip.availability:
            sold_out &= ~window
    for drop, members in plan.drops:
        after = observed_s >= int(drop.at.timestamp())
        factor = np.where(after & members, factor * (1 - drop.pct / 100), factor)

    amount = np.round(plan.base_amount * factor / plan.tick) * plan.tick
    amount = np.maximum(amount, plan.tick)
    available = np.where(plan.avail_stated, np.where(sold_out, 0, 1), -1).astype(np.int8)
    return {"hour": np.broadcast_to(h, amount.shape), "observed_s": observed_s,
            "amount": amount, "available": available}


def _chunk_frame(plan: _Plan, hours: np.ndarray) -> pd.DataFrame:
    block = _block(plan, hours)
    n_offers = len(plan.keys)
    return pd.DataFrame({
        "oi": np.tile(np.arange(n_offers, dtype=np.int32), len(hours)),
        "h": block["hour"].ravel().astype(np.int64),
        "observed_s": block["observed_s"].ravel(),
        "amount": block["amount"].ravel(),
        "available": block["available"].ravel(),
    })


_INSERT_OBSERVATIONS = """
    insert into observations
    select
        to_timestamp(c.observed_s) as observed_at,
        to_timestamp(c.h * 3600) as observed_hour,
        o.source, o.vendor, o.vendor_kind, o.region_code, o.country, o.province_or_state, o.city,
        o.is_tier1_city, o.sku, o.gpu_model, o.gpu_variant, o.gpu_count,
        o.gpu_fraction::decimal(9, 6), o.vram_gb::decimal(9, 2), o.offer_kind, o.billing_period,
        round(c.amount, 6)::decimal(18, 6) as price_amount,
        o.currency,
        round(round(c.amount, 6) * o.cny_factor, 6)::decimal(18, 6) as price_per_gpu_hour_cny,
        round(round(c.amount, 6) * o.usd_factor, 6)::decimal(18, 6) as price_per_gpu_hour_usd,
        o.fx_rate_date::date,
        case c.available when 1 then true when 0 then false end as available,
        o.url, o.raw_ref, o.offer_id,
        'sim-' || o.source || '-' || strftime(make_timestamp(c.h * 3600000000), '%Y%m%dT%H')
            as crawl_id
    from sim_chunk as c
    join sim_offers as o on c.oi = o.oi
"""

_INSERT_CRAWLS = """
    insert {or_ignore} into raw.crawls (crawl_id, run_id, source, mode, started_at, finished_at,
        passed, offers, requests, failures, normalized_at, normalized_rows, quarantined_rows,
        status)
    select
        'sim-' || s.source || '-' || strftime(make_timestamp(c.h * 3600000000), '%Y%m%dT%H'),
        ?, s.source, 'simulated', to_timestamp(c.observed_s - 20), to_timestamp(c.observed_s + 10),
        true, s.offers, null, []::varchar[], ?, s.offers, 0, 'passed'
    from sim_crawls as c
    join sim_sources as s on c.si = s.si
"""


def _register_plan(con: duckdb.DuckDBPyConnection, plan: _Plan) -> None:
    counts = np.bincount(plan.source_idx, minlength=len(plan.sources))
    sources = pd.DataFrame({"si": np.arange(len(plan.sources), dtype=np.int32),
                            "source": plan.sources, "offers": counts.astype(np.int32)})
    for name, frame in (("sim_offers", plan.offers), ("sim_sources", sources)):
        con.register(f"{name}_df", frame)
        con.execute(f"create or replace temp table {name} as select * from {name}_df")
        con.unregister(f"{name}_df")


def _insert(con: duckdb.DuckDBPyConnection, plan: _Plan, hours: np.ndarray, normalized_at: datetime,
            run_id: str, or_ignore: bool = False) -> int:
    """Observations and crawls of every source at `hours`; returns the observation rows built."""
    chunk = _chunk_frame(plan, hours)
    con.register("sim_chunk", chunk)
    con.register("sim_crawls", _crawl_frame(plan, hours))
    try:
        observations = _INSERT_OBSERVATIONS
        if or_ignore:
            observations = observations.replace("insert into", "insert or ignore into")
        con.execute(observations)
        con.execute(_INSERT_CRAWLS.format(or_ignore="or ignore" if or_ignore else ""),
                    [run_id, normalized_at])
    finally:
        con.unregister("sim_chunk")
        con.unregister("sim_crawls")
    return len(chunk)


def _crawl_frame(plan: _Plan, hours: np.ndarray) -> pd.DataFrame:
    n_sources = len(plan.sources)
    return pd.DataFrame({
        "si": np.tile(np.arange(n_sources, dtype=np.int32), len(hours)),
        "h": np.repeat(hours, n_sources).astype(np.int64),
        "observed_s": _crawl_times(plan, hours).ravel(),
    })


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ModelBuild:
    table: str
    how: str          # "view" | "full" | "incremental from <day>" | "up to date"
    seconds: float


@dataclass(frozen=True)
class SimulationResult:
    rows: int                       # observations written
    offers: int
    seconds: float                  # writing the observations and crawls (models excluded)
    db_path: Path | None = None
    start: datetime | None = None
    end: datetime | None = None     # exclusive
    crawls: int = 0
    models: tuple[ModelBuild, ...] = ()
    models_seconds: float = 0.0
    notes: tuple[str, ...] = ()     # effects that could not be applied everywhere, and why

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds else float("nan")


def check_target(db_path: str | Path) -> Path:
    """The simulated database's path, refusing the real one: never a file named prices.db, never
    the configured data/prices.db, never a database holding crawls that were not simulated."""
    from pipelines.paths import db_path as real_db_path

    path = Path(db_path).expanduser().resolve()
    if path.name.lower() == "prices.db" or path == real_db_path().resolve():
        raise SimulationError(f"refusing to write simulated data into {path}: that is the real "
                              "price history (use e.g. data/simulated.db)")
    return path


def _is_simulated(path: Path) -> bool:
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        raise SimulationError(f"{path}: cannot open it as a DuckDB database, so cannot tell it "
                              f"was simulated; leaving it alone ({exc})") from exc
    try:
        tables = {r[0] for r in con.execute(
            "select schema_name || '.' || table_name from duckdb_tables()").fetchall()}
        if "raw.crawls" not in tables:
            return "main.observations" not in tables
        return con.execute("select count(*) from raw.crawls where mode <> 'simulated'"
                           ).fetchone()[0] == 0
    finally:
        con.close()


def _connect(path: Path) -> duckdb.DuckDBPyConnection:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return duckdb.connect(str(path), config=dict(DUCKDB_CONFIG))
    except duckdb.IOException as exc:
        raise SimulationError(f"{path}: cannot open for writing ({exc})") from exc


def _fresh_database(path: Path) -> duckdb.DuckDBPyConnection:
    if path.exists():
        if not _is_simulated(path):
            raise SimulationError(f"{path} holds data that was not simulated; refusing to replace "
                                  "it (pick another --db)")
        path.unlink()
        Path(f"{path}.wal").unlink(missing_ok=True)
    con = _connect(path)
    ensure_schema(con)
    return con


def run_models(con: duckdb.DuckDBPyConnection, full: bool = False) -> list[ModelBuild]:
    """Every dbt_like_sql model in dependency order (incremental ones incrementally unless
    `full`)."""
    from pipelines.lib.sql_models import load_models, run_model
    from pipelines.paths import SQL_DIR

    builds = []
    for model in load_models(SQL_DIR, {"observations", "quarantine"}):
        started = time.perf_counter()
        how = run_model(con, model, full=full)
        builds.append(ModelBuild(model.table, how, time.perf_counter() - started))
    return builds


def simulate(db_path: str | Path, *, start: date | datetime | str, days: int,
             offers: pd.DataFrame | Iterable[dict], effects: Sequence[Effect] = (), seed: int = 0,
             every_hours: int = 1, build_models: bool = True, noise_pct: float = NOISE_PCT,
             progress: Callable[[int, int], None] | None = None) -> SimulationResult:
    """Write `days` days of observations from `start` (00:00 UTC) into a fresh simulated database
    (an existing simulated one is replaced), one crawl every `every_hours` hours per source, then
    build every SQL model on it. `progress(rows_done, rows_total)` is called per chunk."""
    path = check_target(db_path)
    if days < 1:
        raise SimulationError(f"days must be at least 1, got {days}")
    if every_hours < 1:
        raise SimulationError(f"every_hours must be at least 1, got {every_hours}")
    start_dt = _start_datetime(start)
    plan = _plan(offers, effects, seed, noise_pct)
    first = _hour_of(start_dt)
    hours = np.arange(first, first + days * 24, every_hours, dtype=np.int64)
    n_offers = len(plan.keys)
    total = len(hours) * n_offers
    step = max(1, CHUNK_ROWS // n_offers)

    started = time.perf_counter()
    con = _fresh_database(path)
    try:
        # Bulk load without the primary key's index, then add it: the same table as
        # ensure_schema's, several times faster to fill.
        ddl = con.execute("select sql from duckdb_tables() where schema_name = 'main' "
                          "and table_name = 'observations'").fetchone()[0]
        without_key = ddl.replace(", PRIMARY KEY(offer_id, observed_hour)", "")
        if without_key == ddl:
            raise SimulationError("unexpected observations DDL: no PRIMARY KEY(offer_id, "
                                  "observed_hour) to defer")
        con.execute("drop table observations")
        con.execute(without_key)
        con.execute("set preserve_insertion_order = false")   # lets DuckDB write in parallel
        _register_plan(con, plan)
        normalized_at = datetime.now(UTC)
        written = 0
        for i in range(0, len(hours), step):
            written += _insert(con, plan, hours[i:i + step], normalized_at, f"sim-seed-{seed}")
            if progress:
                progress(written, total)
        con.execute("alter table observations add primary key (offer_id, observed_hour)")
        con.execute("checkpoint")
    except BaseException:
        con.close()                       # a half-written simulation is not left behind
        path.unlink(missing_ok=True)
        Path(f"{path}.wal").unlink(missing_ok=True)
        raise
    seconds = time.perf_counter() - started
    builds: list[ModelBuild] = []
    models_seconds = 0.0
    try:
        if build_models:
            t0 = time.perf_counter()
            builds = run_models(con, full=True)
            models_seconds = time.perf_counter() - t0
            con.execute("checkpoint")
    finally:
        con.close()
    end = start_dt + timedelta(days=days)
    return SimulationResult(rows=total, offers=n_offers, seconds=seconds, db_path=path,
                            start=start_dt, end=end, crawls=len(hours) * len(plan.sources),
                            models=tuple(builds), models_seconds=models_seconds,
                            notes=tuple(plan.gap_notes))


def append_hour(db_path: str | Path, hour: datetime, offers: pd.DataFrame | Iterable[dict],
                effects: Sequence[Effect] = (), seed: int = 0, *,
                noise_pct: float = NOISE_PCT) -> int:
    """Add one more crawl hour (every offer observed once, one raw.crawls row per source) to a
    simulated database, exactly as a longer simulation would have written it; already present
    rows are left alone. Models are not rebuilt. Returns the rows added."""
    path = check_target(db_path)
    if not path.exists():
        raise SimulationError(f"{path}: no such database (run simulate first)")
    if not _is_simulated(path):
        raise SimulationError(f"{path} holds data that was not simulated; refusing to write")
    plan = _plan(offers, effects, seed, noise_pct)
    hours = np.array([_hour_of(hour)], dtype=np.int64)
    con = _connect(path)
    try:
        ensure_schema(con)
        _register_plan(con, plan)
        before = con.execute("select count(*) from observations").fetchone()[0]
        with transaction(con):
            _insert(con, plan, hours, datetime.now(UTC), f"sim-seed-{seed}", or_ignore=True)
        return con.execute("select count(*) from observations").fetchone()[0] - before
    finally:
        con.close()


def _start_datetime(start: date | datetime | str) -> datetime:
    if isinstance(start, str):
        try:
            start = datetime.fromisoformat(start)
        except ValueError as exc:
            raise SimulationError(f"start {start!r} is not an ISO date") from exc
    if not isinstance(start, datetime):
        start = datetime(start.year, start.month, start.day)
    if start.tzinfo is None:
        start = start.replace(tzinfo=UTC)
    start = start.astimezone(UTC)
    if (start.minute, start.second, start.microsecond) != (0, 0, 0):
        raise SimulationError(f"start {start.isoformat()} is not on the hour")
    return start


def months_to_days(start: date, months: int) -> int:
    """Days from `start` to the same day `months` calendar months later."""
    year, month = divmod(start.month - 1 + months, 12)
    end_year, end_month = start.year + year, month + 1
    end_day = min(start.day, calendar.monthrange(end_year, end_month)[1])
    return (date(end_year, end_month, end_day) - start).days


# --------------------------------------------------------------------------------------------
# Command line (registered by pipelines/cli.py as `gpuprices simulate`)
# --------------------------------------------------------------------------------------------

def _default_start(months: int) -> date:
    today = datetime.now(UTC).date()
    year, month = divmod(today.month - 1 - months, 12)
    return date(today.year + year, month + 1, 1)


def _parse_effects(dips: Sequence[str], dip_availability: bool, gaps: Sequence[str],
                   drops: Sequence[str]) -> list[Effect]:
    try:
        effects: list[Effect] = [MonthEndDip.parse(s, dip_availability) for s in dips]
        effects += [RegionalGap.parse(s) for s in gaps]
        effects += [PriceDrop.parse(s) for s in drops]
    except SimulationError as exc:
        raise click.BadParameter(str(exc)) from exc
    if dip_availability and not dips:
        raise click.BadParameter("--dip-availability needs a --dip")
    return effects


def _describe(effect: Effect) -> str:
    if isinstance(effect, MonthEndDip):
        who = ", ".join(effect.sources) if effect.sources else "every source"
        extra = ", every stated offer in stock" if effect.availability else ""
        return (f"month-end dip: -{effect.size_pct:g} % over the last {effect.days} days "
                f"({who}{extra})")
    if isinstance(effect, RegionalGap):
        return f"regional gap: {effect.province} {effect.pct:g} % below tier-1 cities"
    return f"price drop: {effect.source} -{effect.pct:g} % from {effect.at.isoformat()}"


SIMULATE_EPILOG = """\b
Examples:
  gpuprices simulate --months 3 --dip 8:autodl_cn,idc_ulanqab:5
  gpuprices simulate --start 2026-06-01 --days 60 --regional-gap "Inner Mongolia:25"
  gpuprices simulate --drop autodl_cn:10:2026-07-15T12:00 --every-hours 3
  gpuprices simulate --offers-from data/prices.db --scale 3 --months 12 --no-models
\b
Effects (repeatable; none by default):
  --dip SIZE_PCT[:SOURCES][:DAYS]  prices of SOURCES (comma-separated; all if empty) are SIZE_PCT %
                                   lower in the last DAYS (default 5) UTC days of every month
  --regional-gap PROVINCE:PCT      offers in PROVINCE cost PCT % less than tier-1 cities (same
                                   card, kind and billing period; median of vendor medians)
  --drop SOURCE:PCT:ISO_TIME       from ISO_TIME (UTC) on, SOURCE's prices are PCT % lower
\b
The simulated database is separate from the real one: a file named prices.db is refused, and an
existing simulated database at --db is replaced. See docs/simulator.md.
"""


@click.command("simulate", epilog=SIMULATE_EPILOG,
               context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--db", "db", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The simulated DuckDB file to (re)create [default: <data dir>/simulated.db]. "
                   "Never prices.db.")
@click.option("--start", type=click.DateTime(["%Y-%m-%d", "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S"]),
              default=None, metavar="DATE",
              help="First simulated hour, UTC: 2026-06-01 or 2026-06-01T06:00 [default: the 1st "
                   "of the month --months before the current one: the history ends where the "
                   "current month starts].")
@click.option("--months", type=click.IntRange(min=1), default=3, show_default=True,
              help="Length of the history in calendar months.")
@click.option("--days", type=click.IntRange(min=1), default=None,
              help="Length of the history in days (overrides --months).")
@click.option("--every-hours", type=click.IntRange(min=1), default=1, show_default=True,
              help="One crawl of every source every K hours.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the noise: the same seed writes the same table.")
@click.option("--sources", default=None, metavar="A,B",
              help="Only the offers of these sources (comma-separated) [default: all].")
@click.option("--scale", type=click.IntRange(min=1), default=1, show_default=True,
              help="Clone every offer into N offers (sku/offer_id suffixed #k) for volume.")
@click.option("--offers-from", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Start from the latest offers of this database "
                                 "(marts.latest_prices, opened read-only) instead of crawling the "
                                 "bundled snapshots.")
@click.option("--noise", "noise_pct", type=click.FloatRange(0, 20), default=NOISE_PCT,
              show_default=True, help="Bound of the slow random walk of each price, +/- %.")
@click.option("--dip", "dips", multiple=True, metavar="SIZE[:SOURCES][:DAYS]",
              help="Month-end dip (repeatable), e.g. 8:autodl_cn,idc_ulanqab:5.")
@click.option("--dip-availability", is_flag=True,
              help="During a dip, every offer that states its stock is in stock.")
@click.option("--regional-gap", "gaps", multiple=True, metavar="PROVINCE:PCT",
              help='Regional gap (repeatable), e.g. "Inner Mongolia:25".')
@click.option("--drop", "drops", multiple=True, metavar="SOURCE:PCT:ISO_TIME",
              help="Price drop (repeatable), e.g. autodl_cn:10:2026-07-15T12:00.")
@click.option("--no-models", is_flag=True, help="Write the observations only; build no SQL model.")
def simulate_command(db: Path | None, start: datetime | None, months: int, days: int | None,
                     every_hours: int, seed: int, sources: str | None, scale: int,
                     offers_from: Path | None, noise_pct: float, dips: tuple[str, ...],
                     dip_availability: bool, gaps: tuple[str, ...], drops: tuple[str, ...],
                     no_models: bool) -> None:
    """Simulate months of hourly price history with known effects, in a database of its own.

    The offers are real (the bundled snapshots, crawled offline and normalized, or --offers-from a
    database); each price follows its real value with small seeded noise, stock flips now and
    then, and the effects you switch on are injected exactly. Then every SQL model is built on the
    simulated history, so each signal can be checked against the truth you injected.
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeRemainingColumn)
    from rich.table import Table

    from pipelines.lib.sql_models import SqlModelError
    from pipelines.paths import data_dir

    console = Console(highlight=False)
    path = db or data_dir() / DEFAULT_DB_NAME
    try:
        check_target(path)
    except SimulationError as exc:
        raise click.BadParameter(str(exc), param_hint="--db") from exc
    effects = _parse_effects(dips, dip_availability, gaps, drops)
    start_day = start.date() if start else _default_start(months)
    start_dt = start.replace(tzinfo=UTC) if start else datetime(start_day.year, start_day.month,
                                                                start_day.day, tzinfo=UTC)
    n_days = days or months_to_days(start_day, months)
    wanted = list(_split_names(sources)) if sources else None
    clock = time.perf_counter()
    try:
        if offers_from:
            console.print(f"offers: latest prices of {offers_from}")
            offers = load_offers(offers_from=offers_from, sources=wanted, scale=scale, seed=seed)
        else:
            console.print("offers: crawling the bundled snapshots offline (replay) ...")

            def on_source(source: str, status: str, n: int) -> None:
                mark = "[green]ok[/]" if status == "passed" else f"[red]{escape(status)}[/]"
                console.print(f"  {source:<15} {mark} {n} offers")

            offers = load_offers(sources=wanted, scale=scale, seed=seed, on_source=on_source)
        with Progress(TextColumn("writing observations"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("rows"), TimeRemainingColumn(), console=console,
                      transient=True) as bar:
            task = bar.add_task("rows", total=None)

            def progress(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            result = simulate(path, start=start_dt, days=n_days, offers=offers, effects=effects,
                              seed=seed, every_hours=every_hours, build_models=False,
                              noise_pct=noise_pct, progress=progress)
        console.print(f"wrote {result.rows:,} observations of {result.offers:,} offers in "
                      f"{result.seconds:.1f} s ({result.rows_per_second:,.0f} rows/s)")
        builds: list[ModelBuild] = []
        models_seconds = 0.0
        if not no_models:
            with console.status("building the SQL models ..."):
                t0 = time.perf_counter()
                con = _connect(result.db_path)
                try:
                    builds = run_models(con, full=True)
                    con.execute("checkpoint")
                except (SqlModelError, duckdb.Error) as exc:
                    raise SimulationError(f"the observations are in {result.db_path}, but "
                                          f"building the SQL models failed: {exc}") from exc
                finally:
                    con.close()
                models_seconds = time.perf_counter() - t0
    except SimulationError as exc:
        raise click.ClickException(str(exc)) from exc
    except duckdb.Error as exc:
        raise click.ClickException(f"DuckDB: {exc}") from exc

    table = Table(title="gpuprices simulate", show_header=False, title_justify="left")
    table.add_row("database", str(result.db_path))
    table.add_row("period", f"{result.start:%Y-%m-%d %H:%M} to {result.end:%Y-%m-%d %H:%M} UTC "
                            f"({n_days} days, a crawl every {every_hours} h)")
    table.add_row("offers", f"{result.offers:,} ({len(set(offers['source']))} sources, "
                            f"scale {scale}, seed {seed}, noise +/-{noise_pct:g} %)")
    table.add_row("rows written", f"{result.rows:,} observations, {result.crawls:,} crawls")
    table.add_row("write speed", f"{result.rows_per_second:,.0f} rows/s ({result.seconds:.1f} s)")
    table.add_row("effects", "\n".join(_describe(e) for e in effects) or "none")
    for note in result.notes:
        table.add_row("", f"[yellow]{note}[/]")
    table.add_row("models", f"{len(builds)} built in {models_seconds:.1f} s" if builds
                  else "not built (--no-models)")
    table.add_row("total time", f"{time.perf_counter() - clock:.1f} s")
    console.print(table)
