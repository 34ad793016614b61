"""Offers a test parsed, through the real normalizer: what lands and what is quarantined, why."""

from __future__ import annotations

from collections.abc import Iterable

from pipelines.normalize import Quarantined, normalize_offer


def normalized(offers: Iterable) -> tuple[list[dict], list[tuple[dict, Quarantined]]]:
    """(the rows that land, (offer, why) for each offer quarantined), both in the offers' order."""
    rows, quarantined = [], []
    for offer in offers:
        try:
            rows.append(normalize_offer(dict(offer)))
        except Quarantined as why:
            quarantined.append((offer, why))
    return rows, quarantined
