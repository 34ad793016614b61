"""The regression reference the index is scored against on real histories (no known truth):
a time-product-dummy over all days of a series, ln price = offer effect + day effect, by
weighted least squares, each close weighted 1 / (its vendor's closes that day) so every vendor
on a day weighs the same. The level of day t is exp(day effect t), rebased where asked."""

from __future__ import annotations

import numpy as np
import pandas as pd


def _linked_days(present: np.ndarray, start: int) -> np.ndarray:
    """The days connected to day `start` through offers seen on both (a day no offer links to
    the others has no day effect relative to them)."""
    days = np.zeros(present.shape[1], dtype=bool)
    days[start] = True
    offers = np.zeros(present.shape[0], dtype=bool)
    while True:
        more_offers = present[:, days].any(axis=1)
        more_days = present[more_offers].any(axis=0)
        if (more_offers == offers).all() and (more_days == days).all():
            return days
        offers, days = more_offers, more_days


def day_effects(closes: pd.DataFrame) -> pd.Series:
    """exp(day effect) per index_date (1.0 on the first day), from `closes` (columns offer_id,
    vendor, index_date, price: the counted, fresh closes of one series). Only the days linked to
    the first day are returned."""
    if closes.empty:
        return pd.Series(dtype=float)
    offers = sorted(closes["offer_id"].unique())
    days = sorted(closes["index_date"].unique())
    o = closes["offer_id"].map({k: i for i, k in enumerate(offers)}).to_numpy()
    t = closes["index_date"].map({k: i for i, k in enumerate(days)}).to_numpy()
    per_vendor_day = closes.groupby(["vendor", "index_date"])["offer_id"].transform("count")
    weight = np.zeros((len(offers), len(days)))
    logp = np.zeros((len(offers), len(days)))
    weight[o, t] = 1.0 / per_vendor_day.to_numpy(dtype=float)
    logp[o, t] = np.log(closes["price"].to_numpy(dtype=float))
    linked = _linked_days(weight > 0, 0)
    weight, logp = weight[:, linked], logp[:, linked]
    keep = weight.sum(axis=1) > 0
    weight, logp = weight[keep], logp[keep]
    # offers' effects eliminated: the normal equations of the day effects alone (T x T)
    per_offer = weight.sum(axis=1)
    share = weight / per_offer[:, None]
    normal = np.diag(weight.sum(axis=0)) - share.T @ weight
    rhs = (weight * logp).sum(axis=0) - share.T @ (weight * logp).sum(axis=1)
    effect = np.zeros(weight.shape[1])
    if weight.shape[1] > 1:   # day 0 is the origin: its effect is 0
        effect[1:] = np.linalg.lstsq(normal[1:, 1:], rhs[1:], rcond=None)[0]
    return pd.Series(np.exp(effect), index=[d for d, k in zip(days, linked, strict=True) if k])
