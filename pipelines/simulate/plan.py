"""The plan: per-offer constants computed once from the offers and the effects, and the truth rows
of every effect (one per effect and affected offer, the columns of truth.offer_effects)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal

import numpy as np
import pandas as pd

from pipelines.simulate.calendar import local_time_zone
from pipelines.simulate.common import SimulationError
from pipelines.simulate.effects import (
    CHURN_SUFFIX,
    INDEX_EFFECTS,
    OFFER_CHURN_SUFFIX,
    Effect,
    FxMove,
    Jitter,
    MonthEndChurn,
    MonthEndDip,
    OfferChurn,
    PriceDrop,
    Spike,
    Trend,
    Typo,
)
from pipelines.simulate.index_effects import (
    IndexPlan,
    churn_clones,
    plan_index_effects,
    typo_offer,
)
from pipelines.simulate.offers import as_frame
from pipelines.simulate.randomness import (
    S_ABLOCK,
    S_APHASE,
    S_CHURN,
    S_KNOT,
    S_PHASE,
    U64,
    offer_keys,
    uniform,
)
from pipelines.simulate.structure import STRUCTURAL_EFFECTS, TRUTH_COLUMNS, apply_structure
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
    keys: np.ndarray              # (N,) uint64 of the offer_id (stock)
    noise_keys: np.ndarray        # (N,) uint64 of the noise_key (price level: same key, same path)
    noise: float                  # fraction, e.g. 0.01
    zones: list[str]              # the local calendars in use
    zone_idx: np.ndarray          # (N,) index into zones
    dips: list[tuple[MonthEndDip, np.ndarray]]
    drops: list[tuple[PriceDrop, np.ndarray]]
    trends: list[tuple[Trend, int, np.ndarray]] = field(default_factory=list)  # (, since hour, )
    fx_moves: list[tuple[FxMove, np.ndarray, np.ndarray]] = field(default_factory=list)
    # (days, offers, listed in the window or out of it): month-end churn
    listings: list[tuple[int, np.ndarray, bool]] = field(default_factory=list)
    truth_rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    index: IndexPlan = field(default_factory=IndexPlan)   # outages, typos, churning clones



def _decimal_tick(value) -> float:
    """Resolution of a listed price: 4 significant digits, finer if the real price is finer."""
    amount = float(value)
    sig = 10.0 ** (math.floor(math.log10(amount)) - 3)
    exponent = Decimal(str(value)).normalize().as_tuple().exponent
    return min(sig, 10.0 ** int(exponent))


def _fx_rates(wanted: set[tuple[str, str, date]]) -> dict[tuple[str, str, date], float | None]:
    """{(currency, to, day): units of `to` per unit of `currency` on the ECB day valid then (None:
    no rate)}; fx_rate remembers its lookups between processes."""
    from spiders.parsing.currencies import FxRateError, fx_rate

    rates: dict[tuple[str, str, date], float | None] = {}
    for currency, to, on in wanted:
        try:
            rates[(currency, to, on)] = float(fx_rate(currency, to, on).rate)
        except (FxRateError, ValueError):
            rates[(currency, to, on)] = None
    return rates


def _rate_day(on) -> date | None:
    """An offer's fx_rate_date as a date (None: not a date, so no rate)."""
    try:
        day = pd.Timestamp(on).date()
    except ValueError:
        return None
    return day if isinstance(day, date) else None


def _check_sources(what: str, wanted: Iterable[str] | None, known: list[str]) -> None:
    unknown = sorted(set(wanted or ()) - set(known))
    if unknown:
        raise SimulationError(f"{what}: no offers of source(s) {', '.join(unknown)}; "
                              f"sources: {', '.join(known)}")


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def truth_rows(effect: str, df: pd.DataFrame, members: np.ndarray, **columns) -> list[dict]:
    """One truth row per offer of `df` in `members`; `columns` are constants, or (N,) arrays
    taken per offer (e.g. time_zone)."""
    rows = []
    for i in np.flatnonzero(members):
        row = {c: None for c in TRUTH_COLUMNS}
        row.update(effect=effect, offer_id=df["offer_id"].iat[i], source=df["source"].iat[i],
                   vendor=df["vendor"].iat[i])
        for name, value in columns.items():
            row[name] = value[i] if isinstance(value, np.ndarray) else value
        rows.append(row)
    return rows


def _churn_clones(df: pd.DataFrame, effects: Sequence[Effect], keys: np.ndarray,
                  known: list[str]) -> tuple[pd.DataFrame, list[tuple[MonthEndChurn, np.ndarray]]]:
    """Month-end churn: the offers that vanish (a seeded share of the sources' offers) and the
    clones that appear (added to the offers, listed in stock); returns the offers with the clones
    and, per churn effect, the (N,) offers it lists only in, or only out of, the window."""
    originals, sources = len(df), df["source"].to_numpy()
    chosen: list[tuple[MonthEndChurn, np.ndarray]] = []
    clones = []
    for k, churn in enumerate(e for e in effects if isinstance(e, MonthEndChurn)):
        _check_sources("churn", churn.sources, known)
        picked = churn.applies_to(sources) & (uniform(keys ^ U64(S_CHURN), k) < churn.share)
        if churn.mode == "appear":
            clone = df[picked].copy()
            suffix = CHURN_SUFFIX if not clones else f"{CHURN_SUFFIX}-{len(clones) + 1}"
            clone["clone_of"] = clone["offer_id"]
            clone["offer_id"] = clone["offer_id"] + suffix
            clone["sku"] = clone["sku"] + suffix
            clone["available"] = True
            clones.append(clone)
        chosen.append((churn, picked))
    if not clones:
        return df, [(c, p) for c, p in chosen]
    grown = pd.concat([df, *clones], ignore_index=True)
    out, start = [], originals
    for churn, picked in chosen:
        members = np.zeros(len(grown), dtype=bool)
        if churn.mode == "appear":
            members[start:start + picked.sum()] = True
            start += picked.sum()
        else:
            members[:originals] = picked
        out.append((churn, members))
    return grown, out


def plan_simulation(offers: pd.DataFrame | Iterable[dict], effects: Sequence[Effect], seed: int,
                    noise_pct: float, start: datetime | None = None) -> Plan:
    """The plan of a simulation starting at `start` (the reference of a Trend without `since`)."""
    df = as_frame(offers)
    # Structural effects first (prices changed, clones added, noise_key shared by region copies),
    # then the month-end clones (which copy the structured offer, noise_key included).
    df, truth, notes = apply_structure(df, effects, seed)
    truth, notes = list(truth), list(notes)
    known_sources = sorted(set(df["source"]))
    df, churns = _churn_clones(df, effects, offer_keys(df["offer_id"], seed), known_sources)
    for churn in (e for e in effects if isinstance(e, OfferChurn)):
        _check_sources("offer churn", churn.sources, known_sources)
    df, cycles = churn_clones(df, effects, offer_keys(df["offer_id"], seed))
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
    days = [_rate_day(on) for on in df["fx_rate_date"]]
    rates = _fx_rates({(ccy, target, day) for ccy, day in zip(df["currency"], days, strict=True)
                      if day is not None for target in ("CNY", "USD")})
    fx_cny, fx_usd = np.empty(n), np.empty(n)
    for i, (ccy, day) in enumerate(zip(df["currency"], days, strict=True)):
        for target, out in (("CNY", fx_cny), ("USD", fx_usd)):
            rate = None if day is None else rates[(ccy, target, day)]
            out[i] = np.nan if rate is None else rate
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
    noise_keys = offer_keys(df["noise_key"], seed)
    kind = df["vendor_kind"].to_numpy()
    spot = (df["offer_kind"] == "spot").to_numpy()
    # How often prices are revised: spot and marketplaces within days, list prices of
    # hyperscalers over months, GPU clouds and IDCs within weeks.
    lo = np.where(spot | (kind == "marketplace"), 6, np.where(kind == "hyperscaler", 336, 48))
    hi = np.where(spot | (kind == "marketplace"), 48, np.where(kind == "hyperscaler", 2160, 336))
    knot_hours = (lo + np.floor(uniform(noise_keys, S_KNOT) * (hi - lo + 1))).astype(np.int64)
    knot_phase = np.floor(uniform(noise_keys, S_PHASE) * knot_hours).astype(np.int64)
    avail_hours = (12 + np.floor(uniform(keys, S_ABLOCK) * 61)).astype(np.int64)
    avail_phase = np.floor(uniform(keys, S_APHASE) * avail_hours).astype(np.int64)
    stated = df["available"].map(lambda v: v is not None and not pd.isna(v)).to_numpy(bool)
    in_stock = df["available"].map(lambda v: bool(v) if v is not None and not pd.isna(v)
                                   else True).to_numpy(bool)
    p_unavailable = np.where(in_stock, 0.05, 0.6)   # sold-out offers mostly stay sold out

    sources_arr = df["source"].to_numpy()
    # the zone an offer states (observations' local_time_zone, when the offers carry it) wins
    declared = df["local_time_zone"] if "local_time_zone" in df else [None] * len(df)
    zone = np.array([local_time_zone(s, c, d if isinstance(d, str) else None)
                     for s, c, d in zip(df["source"], df["country"], declared, strict=True)])
    zones = sorted(set(zone))
    dips, drops, trends, fx_moves, listings = [], [], [], [], []
    for effect in effects:
        if isinstance(effect, MonthEndDip):
            _check_sources("month-end dip", effect.sources, known_sources)
            members = effect.applies_to(sources_arr)
            dips.append((effect, members))
            truth += truth_rows("dip", df, members, size_pct=effect.size_pct, time_zone=zone,
                                detail={"days": effect.days, "availability": effect.availability})
        elif isinstance(effect, PriceDrop):
            _check_sources("price drop", [effect.source], known_sources)
            members = sources_arr == effect.source
            drops.append((effect, members))
            truth += truth_rows("drop", df, members, size_pct=effect.pct,
                                starts_at=_iso(effect.at))
        elif isinstance(effect, Trend):
            _check_sources("trend", effect.sources, known_sources)
            since = effect.since or start
            if since is None:
                raise SimulationError("trend: no start to count from (give Trend(since=...), or "
                                      "append to a database whose truth.scenario has start_at)")
            members = effect.applies_to(sources_arr)
            trends.append((effect, int(since.timestamp()) // 3600, members))
            truth += truth_rows("trend", df, members, size_pct=effect.pct_per_30_days,
                                starts_at=_iso(since), detail={
                                    "compounding": "hourly", "hours_per_period": 720,
                                    "per_hour_factor": (1 + effect.pct_per_30_days / 100)
                                    ** (1 / 720)})
        elif isinstance(effect, FxMove):
            members = (df["currency"] == effect.currency).to_numpy()
            if not members.any():     # a currency nobody lists: nothing to move (a note)
                notes.append(f"fx move: no offers listed in {effect.currency} (currencies: "
                             f"{', '.join(sorted(set(df['currency'])))}); nothing moved")
            moves_usd = effect.currency != "USD"
            fx_moves.append((effect, members, members & moves_usd))
            truth += truth_rows("fx_move", df, members, size_pct=effect.pct,
                                starts_at=_iso(effect.at), detail={
                                    "currency": effect.currency, "moves_usd": moves_usd,
                                    "listed_amount": "unchanged"})
        elif isinstance(effect, INDEX_EFFECTS):
            if not isinstance(effect, OfferChurn):
                _check_sources(type(effect).__name__.lower(), [effect.source], known_sources)
            truth += _index_truth(effect, df, sources_arr)
        elif not isinstance(effect, (MonthEndChurn, *STRUCTURAL_EFFECTS)):
            raise SimulationError(f"unknown effect {effect!r}")
    for churn, members in churns:
        appear = churn.mode == "appear"
        listings.append((churn.days, members, appear))
        detail = {"days": churn.days, "share": churn.share}
        if appear:
            p_unavailable = np.where(members, 0.0, p_unavailable)   # in stock while listed
            for row in truth_rows("churn_appear", df, members, time_zone=zone):
                clone_of = df.loc[df["offer_id"] == row["offer_id"], "clone_of"].iat[0]
                row["detail"] = {**detail, "clone_of": clone_of}
                truth.append(row)
        else:
            truth += truth_rows("churn_vanish", df, members, time_zone=zone, detail=detail)

    source_idx = np.searchsorted(np.array(known_sources), sources_arr)
    sql_offers = df[[c for c in df.columns if c not in ("noise_key", "clone_of")]].copy()
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
        base_amount=amount, tick=np.array([_decimal_tick(v) for v in df["price_amount"]]),
        knot_hours=knot_hours, knot_phase=knot_phase, avail_hours=avail_hours,
        avail_phase=avail_phase, p_unavailable=p_unavailable, avail_stated=stated, keys=keys,
        noise_keys=noise_keys, noise=noise_pct / 100, zones=zones,
        zone_idx=np.searchsorted(np.array(zones), zone), dips=dips, drops=drops, trends=trends,
        fx_moves=fx_moves, listings=listings, truth_rows=truth, notes=notes,
        index=plan_index_effects(df, effects, known_sources, cycles))


def _index_truth(effect, df: pd.DataFrame, sources: np.ndarray) -> list[dict]:
    """The truth rows of an outage, a spike, a jitter, a typo (its one offer) or an offer churn
    (its clones)."""
    if isinstance(effect, OfferChurn):
        members = df["offer_id"].str.contains(OFFER_CHURN_SUFFIX, regex=False).to_numpy()
        return truth_rows("offer_churn", df, members, size_pct=-effect.discount_pct,
                          detail={"days": effect.days, "share": effect.share})
    members = sources == effect.source
    if isinstance(effect, Spike):
        return truth_rows("spike", df, members, size_pct=effect.pct, starts_at=_iso(effect.at),
                          detail={"hours": effect.hours, "dark_hours": effect.dark_hours})
    if isinstance(effect, Jitter):
        return truth_rows("jitter", df, members, size_pct=effect.pct,
                          starts_at=_iso(effect.since), detail={"daily": True})
    if isinstance(effect, Typo):
        members = np.arange(len(df)) == typo_offer(df, effect.source)
        return truth_rows("typo", df, members, starts_at=_iso(effect.at),
                          detail={"factor": effect.factor, "hours": effect.hours})
    return truth_rows("outage", df, members, starts_at=_iso(effect.at),
                      detail={"days": effect.days})

