"""The plan: per-offer constants computed once from the offers and the effects."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import pandas as pd

from pipelines.simulate.common import SimulationError
from pipelines.simulate.effects import Effect, MonthEndDip, PriceDrop, RegionalGap
from pipelines.simulate.offers import as_frame
from pipelines.simulate.randomness import (S_ABLOCK, S_APHASE, S_KNOT, S_PHASE, offer_keys,
                                           uniform)
from spiders.parsing.prices import HOURS_PER_PERIOD

@dataclass
class Plan:
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


def plan_simulation(offers: pd.DataFrame | Iterable[dict], effects: Sequence[Effect], seed: int,
          noise_pct: float) -> Plan:
    df = as_frame(offers)
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

    keys = offer_keys(df["offer_id"], seed)
    kind = df["vendor_kind"].to_numpy()
    spot = (df["offer_kind"] == "spot").to_numpy()
    # How often prices are revised: spot and marketplaces within days, list prices of
    # hyperscalers over months, GPU clouds and IDCs within weeks.
    lo = np.where(spot | (kind == "marketplace"), 6, np.where(kind == "hyperscaler", 336, 48))
    hi = np.where(spot | (kind == "marketplace"), 48, np.where(kind == "hyperscaler", 2160, 336))
    knot_hours = (lo + np.floor(uniform(keys, S_KNOT) * (hi - lo + 1))).astype(np.int64)
    knot_phase = np.floor(uniform(keys, S_PHASE) * knot_hours).astype(np.int64)
    avail_hours = (12 + np.floor(uniform(keys, S_ABLOCK) * 61)).astype(np.int64)
    avail_phase = np.floor(uniform(keys, S_APHASE) * avail_hours).astype(np.int64)
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
    return Plan(
        offers=sql_offers, sources=known_sources, source_idx=source_idx,
        source_keys=offer_keys([f"source|{s}" for s in known_sources], seed),
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

