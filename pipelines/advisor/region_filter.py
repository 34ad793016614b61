"""The advisor's `--region`: Chinese or English place text as a test on an offer, read by
pipelines.lookup as the CLI and the alert rules read it."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pipelines.advisor.offers import Offer
from pipelines.advisor.workload import AdvisorError
from pipelines.lookup import KnownPlace, match_place, place_hint


def _where(offer: Offer) -> KnownPlace:
    return KnownPlace(offer.region_code, offer.country, offer.province_or_state, offer.city)


def region_predicate(text: str,
                     offers: Iterable[Offer] = ()) -> tuple[Callable[[Offer], bool], str]:
    """--region as a test on an offer, and how it was read: a province (江苏 or Jiangsu, 内蒙古 or
    Inner Mongolia), a city, a country code (CN, US) or a vendor region code (eastus). Unknown
    text raises AdvisorError listing the provinces."""
    known = [_where(o) for o in offers]
    place = match_place(text, known)
    if place is None:
        raise AdvisorError(f"unknown region {text!r}; {place_hint(known)}")
    return (lambda offer: place.matches(_where(offer))), place.description
