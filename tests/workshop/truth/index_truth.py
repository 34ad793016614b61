"""The price index's truth (`make truth`): simulated histories where the market's true path is
known, one effect each (a vendor's 5 % cut in one day, a slow 20 %-a-year decline, cheap offers
that come and go, a vendor dark for a week, a 10x mistyped price, a 5 % exchange-rate swing, a
spike of 80 % that reverts across a stale close, a volatile newcomer), the index published on
each as a run publishes it, and its daily level scored against the true path beside the plain
listing median's, both as percent of their base day.

The true path of a series is what the index estimates: each offer's price without its noise at
its market's close (the market effects alone: cuts, trends, a spike, daily jitter; a churning
clone, a dark vendor, a typo and an exchange rate move nothing), the log averaged over each
vendor's offers, then over its vendors. A spike is in the path until the first fresh close after
it shows it gone (the close in between is stale: nobody could know it reverted)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from pipelines.index import publish_index
from pipelines.simulate import FxMove, PriceDrop, Trend, simulate
from pipelines.simulate.effects import Jitter, OfferChurn, Outage, Spike, Typo
from pipelines.simulate.index_effects import jitter_log

DAYS = 42
DECLINE_PER_YEAR_PCT = -20.0
SERIES_SQL = ("select distinct series_id, offer_id, vendor, source "
              "from intermediate.int_index_offer_days")
# offers with a close held as an unconfirmed possible outlier (marts.held_observations): a spike
# no later look confirmed is, by the index's own rule, not a counted price
HELD_SQL = "select distinct offer_id from intermediate.int_index_offer_days where held"


@dataclass(frozen=True)
class IndexScenario:
    name: str
    effects: tuple


def _ranked(offers: pd.DataFrame, rank: int = 0) -> dict[str, str]:
    """Per market (CNY, USD) the source ranked `rank` by whole-card offers listed in it (0: the
    busiest; a market with fewer sources has none)."""
    whole = offers[offers["gpu_fraction"].astype(float) == 1]
    out = {}
    for currency in ("CNY", "USD"):
        counts = whole.loc[whole["currency"] == currency, "source"].value_counts()
        if len(counts) > rank:
            out[currency] = counts.index[rank]
    return out


def _busiest(offers: pd.DataFrame) -> list[str]:
    return list(_ranked(offers).values())


# a day's close in the truth: 15:00 UTC (the last crawls before Beijing's midnight) or 23:00 UTC
CLOSE_HOUR_UTC = {"CNY": 15, "USD": 23}
SPIKE_HOUR_UTC = {"CNY": 10, "USD": 18}     # seen at that day's close, back at midnight local
NEWCOMER_JOINS_DAY = 8


def scenarios(offers: pd.DataFrame, start: date) -> list[IndexScenario]:
    at = datetime.combine(start, time(3), UTC)
    busiest = _busiest(offers)
    per_30_days = 100 * ((1 + DECLINE_PER_YEAR_PCT / 100) ** (30 / 365) - 1)
    return [
        IndexScenario("vendor cut 5 % in one day",
                      tuple(PriceDrop(s, 5, at + timedelta(days=20)) for s in busiest)),
        IndexScenario("decline 20 %/year", (Trend(per_30_days, since=at),)),
        IndexScenario("cheap offers come and go", (OfferChurn(25, None, days=3, share=0.5),)),
        IndexScenario("vendor dark for a week",
                      tuple(Outage(s, 7, at + timedelta(days=15)) for s in busiest)),
        IndexScenario("10x mistyped price",
                      tuple(Typo(s, 10, at + timedelta(days=12, hours=6), 30) for s in busiest)),
        IndexScenario("exchange rate 5 %", (FxMove("USD", 5, at + timedelta(days=20)),)),
        IndexScenario("spike 80 % reverting across a stale close", tuple(
            Spike(source, 80, datetime.combine(start + timedelta(days=20),
                                               time(SPIKE_HOUR_UTC[currency]), UTC))
            for currency, source in _ranked(offers).items())),
        IndexScenario("volatile newcomer", tuple(
            effect for source in _ranked(offers, 1).values()
            for effect in (Outage(source, NEWCOMER_JOINS_DAY, at - timedelta(hours=3)),
                           Jitter(source, 20, at + timedelta(days=NEWCOMER_JOINS_DAY))))),
    ]


def true_log_factor(effects: tuple, sources: pd.Series, moment: datetime) -> np.ndarray:
    """Each offer's log price factor at `moment` from the market effects (noise left out)."""
    out = np.zeros(len(sources))
    for effect in effects:
        if isinstance(effect, PriceDrop) and moment >= effect.at:
            out += np.where(sources == effect.source, math.log(1 - effect.pct / 100), 0.0)
        elif isinstance(effect, Spike) and effect.at <= moment < effect.seen_until:
            out += np.where(sources == effect.source, math.log(1 + effect.pct / 100), 0.0)
        elif isinstance(effect, Jitter) and moment >= effect.since:
            day = int(moment.timestamp() // 86400)
            out += np.where(sources == effect.source, jitter_log(effect, day), 0.0)
        elif isinstance(effect, Trend) and moment >= effect.since:
            hours = (moment - effect.since).total_seconds() / 3600
            members = effect.applies_to(sources.to_numpy())
            out += np.where(members, hours / 720 * math.log(1 + effect.pct_per_30_days / 100), 0)
    return out


def score(con: duckdb.DuckDBPyConnection, effects: tuple) -> pd.DataFrame:
    """Every published day with a level: the index's and the listing median's error in pp
    against the true path, all three as percent of the series' base day."""
    rows = con.execute("select series_id, index_date, index_level, listing_median, base_date, "
                       "base_level, vendors_matched from marts.price_index "
                       "where index_level is not null").df()
    members = con.execute(SERIES_SQL).df()
    members = members[~members["offer_id"].str.contains("#", regex=False)]   # clones: no truth
    held = set(con.execute(HELD_SQL).df()["offer_id"])
    spikes = [e for e in effects if isinstance(e, Spike)]
    out = []
    for series_id, days in rows.groupby("series_id"):
        offers = members[members["series_id"] == series_id]
        days = days.sort_values("index_date")
        base = days["base_date"].iloc[0]

        close = CLOSE_HOUR_UTC["USD" if "|world|" in series_id else "CNY"]

        def path(day, offers=offers, close=close) -> float:
            # the day's close: the last crawl before the end of the vendor's day (UTC+8 or UTC)
            moment = datetime.combine(day, time(close), UTC)
            logs = pd.Series(true_log_factor(effects, offers["source"], moment),
                             index=offers.index)
            for spike in spikes:      # a held spike never counted: not in the path either
                if spike.at <= moment < spike.seen_until:
                    unseen = offers["offer_id"].isin(held) & (offers["source"] == spike.source)
                    logs[unseen] -= math.log(1 + spike.pct / 100)
            return math.exp(logs.groupby(offers["vendor"]).mean().mean())

        truth_base = path(base)
        median_base = days.loc[days["index_date"] == base, "listing_median"]
        if median_base.empty:
            continue
        for row in days.itertuples():
            truth = 100 * path(row.index_date) / truth_base
            out.append({"series_id": series_id, "index_date": row.index_date,
                        "vendors": row.vendors_matched,
                        "index_error_pp": 100 * row.index_level / row.base_level - truth,
                        "median_error_pp": 100 * row.listing_median / median_base.iloc[0]
                        - truth})
    return pd.DataFrame(out)


def summary(errors: pd.DataFrame) -> dict:
    if errors.empty:
        return {"rows": 0}
    index, median = errors["index_error_pp"].abs(), errors["median_error_pp"].abs()
    return {"rows": len(errors), "series": int(errors["series_id"].nunique()),
            "index_error_pp_median": round(float(index.median()), 4),
            "index_error_pp_max": round(float(index.max()), 4),
            "median_error_pp_median": round(float(median.median()), 4),
            "median_error_pp_max": round(float(median.max()), 4)}


def run_index_truth(offers: pd.DataFrame, start: date, work: Path, *, seed: int = 1,
                    noise_pct: float = 1.0, every_hours: int = 4, days: int = DAYS,
                    keep: bool = False, say: Callable[[str], None] = print) -> dict:
    """Each scenario simulated over `days` days, its index published and scored; the summary of
    each and the worst figures over them."""
    results = {}
    todo = scenarios(offers, start)
    for i, sc in enumerate(todo, 1):
        path = work / f"index-{i}.db"
        simulate(path, start=start, days=days, offers=offers, effects=sc.effects, seed=seed,
                 every_hours=every_hours, noise_pct=noise_pct)
        con = duckdb.connect(str(path))
        try:
            publish_index(con, datetime.now(UTC))
            results[sc.name] = summary(score(con, sc.effects))
        finally:
            con.close()
        if not keep:
            path.unlink(missing_ok=True)
        say(f"[index {i}/{len(todo)}] {sc.name}: {results[sc.name]}")
    worst = [r for r in results.values() if r.get("rows")]
    return {"days": days, "noise_pct": noise_pct, "scenarios": results,
            "index_error_pp_median_max": max(r["index_error_pp_median"] for r in worst)
            if worst else None,
            "index_error_pp_max": max(r["index_error_pp_max"] for r in worst) if worst else None}
