"""Matching each close against its offer's past (pure; docs/price-index.md, gpi-3), day by day.

An offer's close is matched against its last accepted close in the `match_window_days` before
it, the days between imputed by the series' own change (the CPI Manual's class-mean imputation):
its relative is its move *beyond the market's* since it was last seen. So a move and its
reversal across a stale or missing close both enter and cancel, a vendor absent on a day the
market moved does not add that move again on its return, and a vendor that moved while the
others were unseen is pulled back to its share when they come back. A relative beyond
`max_relative` either way marks the close an error, never accepted (the next close is matched
against the one before it). An offer entering after the series' first day, or again after a
longer gap, is a newcomer: its first `entry_days` closes are only collected, and its first
relative is taken against their mean (each moved by the market since), so a volatile vendor
joining enters at its own average, not at one draw of its range."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd


@dataclass
class _Offer:
    last_day: object            # the day of its last accepted close
    last: float | None = None   # that close's log price less the chain's log level that day
    entry: list[float] = field(default_factory=list)   # a newcomer's collected closes, same


def match_closes(usable: pd.DataFrame, calendar, rules) -> tuple[pd.DataFrame, np.ndarray]:
    """The matched closes of `usable` (its rows, with `log_relative` and `within_bound`) and
    the (days,) log change of each calendar day: the mean over vendors of the mean of each
    vendor's relatives within the bound (0 on a day with none)."""
    bound = float(np.log(rules.max_relative))
    first_day = calendar[0]
    offers: dict[str, _Offer] = {}
    chain = 0.0                                   # the log level through the day before
    point = np.zeros(len(calendar))
    matched: list[tuple[int, float, bool]] = []
    by_day = {day: frame for day, frame in usable.groupby("index_date")}
    for i, day in enumerate(calendar):
        closes = by_day.get(day)
        if closes is None:
            continue
        logs = np.log(closes["close_price_amount"].to_numpy(dtype=float))
        today: list[tuple[int, str, float, str]] = []    # (row, offer, log, what)
        per_vendor: dict[str, list[float]] = {}
        for row, offer_id, vendor, log in zip(closes.index, closes["offer_id"],
                                              closes["vendor"], logs, strict=True):
            seen = offers.get(offer_id)
            if seen is None or (day - seen.last_day).days > rules.match_window_days:
                today.append((row, offer_id, log, "first" if day == first_day else "enter"))
                continue
            if seen.last is None and len(seen.entry) < rules.entry_days:
                today.append((row, offer_id, log, "collect"))
                continue
            reference = seen.last if seen.last is not None else float(np.mean(seen.entry))
            relative = (log - chain) - reference
            within = abs(relative) <= bound
            matched.append((row, relative, within))
            if within:
                per_vendor.setdefault(vendor, []).append(relative)
                today.append((row, offer_id, log, "accept"))
        if per_vendor:
            point[i] = float(np.mean([np.mean(v) for v in per_vendor.values()]))
        chain += point[i]
        for _row, offer_id, log, what in today:
            deflated = log - chain
            if what == "first":
                offers[offer_id] = _Offer(day, deflated)
            elif what == "enter":
                offers[offer_id] = _Offer(day, None, [deflated])
            elif what == "collect":
                seen = offers[offer_id]
                seen.last_day = day
                seen.entry.append(deflated)
            else:
                offers[offer_id] = _Offer(day, deflated)
    pairs = usable.loc[[row for row, _, _ in matched]].copy()
    pairs["log_relative"] = np.array([x for _, x, _ in matched], dtype=float)
    pairs["within_bound"] = np.array([w for _, _, w in matched], dtype=bool)
    return pairs, point
