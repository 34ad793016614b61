"""The advisor's `--region`: Chinese or English place text as a test on an offer.

The CLI's `--region` and the alert rules' `regions` read place text too; this reading is the
advisor's own until the three are merged into one."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable

from pipelines.advisor.offers import Offer
from pipelines.advisor.workload import AdvisorError


def region_predicate(text: str,
                     offers: Iterable[Offer] = ()) -> tuple[Callable[[Offer], bool], str]:
    """--region as a test on an offer, and how it was read: a province (江苏 or Jiangsu, 内蒙古 or
    Inner Mongolia), a city, a country code (CN, US) or a vendor region code (eastus). Unknown
    text raises AdvisorError listing the provinces."""
    from spiders.parsing.regions import RegionParseError, province_aliases, resolve_region

    key = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    offers = list(offers)

    def fold(value: str | None) -> str:
        return " ".join(unicodedata.normalize("NFKC", value or "").casefold().split())

    provinces = {fold(alias): name for alias, name in province_aliases().items()}
    provinces.update({fold(o.province_or_state): o.province_or_state for o in offers
                      if o.province_or_state})
    if key in provinces:
        name = provinces[key]
        return (lambda o: o.province_or_state == name), f"province/state {name}"
    cities = {fold(o.city): o.city for o in offers if o.city}
    if key in cities:
        name = cities[key]
        return (lambda o: o.city == name), f"city {name}"
    countries = {fold(o.country): o.country for o in offers}
    if key in countries:
        name = countries[key]
        return (lambda o: o.country == name), f"country {name}"
    codes = {fold(o.region_code) for o in offers}
    if key in codes:
        return (lambda o: fold(o.region_code) == key), f"region code {text}"
    try:  # other spellings of a place: 江苏省, 华北2（北京）, "Texas, US"
        region = resolve_region(text)
    except RegionParseError:
        region = None
    if region and region.city:
        return (lambda o: o.city == region.city), f"city {region.city}"
    if region and region.province_or_state:
        name = region.province_or_state
        return (lambda o: o.province_or_state == name), f"province/state {name}"
    if region:
        return (lambda o: o.country == region.country), f"country {region.country}"
    known = sorted({n for n in provinces.values() if n})
    raise AdvisorError(f"unknown region {text!r}; known provinces/states: {', '.join(known)}; "
                       "or a city, a country code (CN, US) or a vendor region code")
