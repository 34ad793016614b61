"""Canonical region (country / province or state / city) from a vendor's region text.

The mapping lives in the reviewed table regions.csv next to this module (one row per spelling).
Rows with an empty `vendor` apply to every vendor; a vendor's own rows win (Huawei's
"ap-southeast-1" is Hong Kong, AWS's is Singapore). A row's `vendor` is a source's region key: the
spider's `region_key` (spiders/base/spider.py), which is its own name unless it declares another
(a second path reads its direct source's regions). Text that matches nothing raises.
"""

from __future__ import annotations

import csv
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pycountry

_CSV = Path(__file__).with_name("regions.csv")
_COLUMNS = ["vendor", "alias", "region_code", "country", "province_or_state", "city",
            "is_tier1_city", "note"]
TIER1_CITIES = frozenset({"Beijing", "Shanghai", "Guangzhou", "Shenzhen"})
_ISO_COUNTRIES = frozenset(country.alpha_2 for country in pycountry.countries)
# Areas a listing may give instead of a place: an offer cannot be placed in one country from them.
_AREAS = frozenset({"europe", "eu", "north america", "south america", "latin america", "latam",
                    "americas", "asia", "apac", "asia pacific", "emea", "middle east", "africa",
                    "oceania", "global", "worldwide", "multiple", "multi region"})
# Separators of a list of places: "Finland, Iceland", "US/Europe", "Switzerland & Germany".
_LIST_RE = re.compile(r"\s*(?:[,/&;+]|\band\b)\s*", re.IGNORECASE)
# Other spellings of the same place: "江苏省" -> 江苏, "Jiangsu Province" -> jiangsu.
_SPELLING_SUFFIX_RE = re.compile(r"^(.+?)(?:省|市|特别行政区|壮族自治区|回族自治区|维吾尔自治区|"
                                 r"自治区| province| city)$")
# Zones inside a known region keep their own code but take the region's place:
# "北京C区" -> 北京, "us-east-1a" / "us-central1-a" / "cn-beijing-h" / "ap-guangzhou-3".
_ZONE_RES = tuple(re.compile(p) for p in (
    r"^(.*\d)[a-f]$", r"^(.*\d)-[a-f]$", r"^((?:cn|ap|eu|na|sa)-[a-z]+)-[a-z]$",
    r"^(ap-[a-z]+)-\d+$", r"^(\D+?)[a-z]?区$"))
# RunPod-style data-centre ids not in the table: "EU-PL-1" -> PL, "US-XX-1" -> US.
_DC_ID_RE = re.compile(r"^(?P<p>us|ca|eu|eur|ap|oc|sa|af|me)-(?P<c>[a-z]{2,3})-\d+$")
# Postal codes of US states (and DC) and Canadian provinces and territories: "TX, US" -> Texas.
# Read only with the country after the comma, so "CA, US" is California and "ON, CA" Ontario.
_STATE_CODES = {
    "US": {
        "AL": "Alabama", "AK": "Alaska", "AZ": "Arizona", "AR": "Arkansas", "CA": "California",
        "CO": "Colorado", "CT": "Connecticut", "DE": "Delaware", "DC": "District of Columbia",
        "FL": "Florida", "GA": "Georgia", "HI": "Hawaii", "ID": "Idaho", "IL": "Illinois",
        "IN": "Indiana", "IA": "Iowa", "KS": "Kansas", "KY": "Kentucky", "LA": "Louisiana",
        "ME": "Maine", "MD": "Maryland", "MA": "Massachusetts", "MI": "Michigan",
        "MN": "Minnesota", "MS": "Mississippi", "MO": "Missouri", "MT": "Montana",
        "NE": "Nebraska", "NV": "Nevada", "NH": "New Hampshire", "NJ": "New Jersey",
        "NM": "New Mexico", "NY": "New York", "NC": "North Carolina", "ND": "North Dakota",
        "OH": "Ohio", "OK": "Oklahoma", "OR": "Oregon", "PA": "Pennsylvania", "RI": "Rhode Island",
        "SC": "South Carolina", "SD": "South Dakota", "TN": "Tennessee", "TX": "Texas",
        "UT": "Utah", "VT": "Vermont", "VA": "Virginia", "WA": "Washington", "WV": "West Virginia",
        "WI": "Wisconsin", "WY": "Wyoming",
    },
    "CA": {
        "AB": "Alberta", "BC": "British Columbia", "MB": "Manitoba", "NB": "New Brunswick",
        "NL": "Newfoundland and Labrador", "NS": "Nova Scotia", "NT": "Northwest Territories",
        "NU": "Nunavut", "ON": "Ontario", "PE": "Prince Edward Island", "QC": "Quebec",
        "SK": "Saskatchewan", "YT": "Yukon",
    },
}
_NOT_A_COUNTRY = {"NA"}   # "NA" as a region is "not available" far more often than Namibia
# What a spider writes as region text when the vendor gives no location at all (a vast.ai host
# hiding it): the offer is kept, and normalization quarantines it with this as the reason.
NO_LOCATION = "no location given by the vendor"


class RegionParseError(ValueError):
    """The region text matches no known region; the message names vendor and text."""


@dataclass(frozen=True)
class Region:
    region_code: str               # vendor's code, Latin ones lower-cased ("eastus", "内蒙B区")
    country: str                   # ISO 3166-1 alpha-2
    province_or_state: str | None  # English name: "Beijing", "Inner Mongolia", "Virginia"
    city: str | None               # "Beijing", "Ulanqab", "Ashburn"
    is_tier1_city: bool            # Beijing, Shanghai, Guangzhou, Shenzhen (China only)


def _norm(text: str) -> str:
    # NFKC folds full-width parentheses/letters ("华北2（北京）" == "华北2(北京)").
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _code(text: str) -> str:
    """Keep CJK codes as written ("内蒙B区"); lower-case Latin ones ("us-west-2")."""
    text = " ".join(unicodedata.normalize("NFKC", text).split()).strip(" ,")
    return text if re.search(r"[\u4e00-\u9fff]", text) else text.casefold()


def region_key(key: str | None) -> str | None:
    """A source's region key as regions.csv's vendor column spells it ("tencent_cn"); None or
    blank: no vendor (only rows every vendor shares, or a vendor row all vendors agree on)."""
    return key.strip().casefold() if key and key.strip() else None


@lru_cache(maxsize=1)
def _rows() -> tuple[dict[str, str], ...]:
    with _CSV.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames != _COLUMNS:
            raise ValueError(f"{_CSV.name}: columns {reader.fieldnames}, expected {_COLUMNS}")
        return tuple(reader)


@lru_cache(maxsize=1)
def _table() -> dict[tuple[str, str], Region]:
    """(vendor key or "", normalized alias) -> Region; a bad CSV edit fails loudly on load."""
    table: dict[tuple[str, str], Region] = {}
    for n, row in enumerate(_rows(), start=2):
        tier1 = {"true": True, "false": False}.get(row["is_tier1_city"])
        if row["country"] not in _ISO_COUNTRIES or tier1 is None or not row["region_code"]:
            raise ValueError(f"{_CSV.name} line {n}: bad country, tier flag or code: {row}")
        if tier1 != (row["country"] == "CN" and row["city"] in TIER1_CITIES):
            raise ValueError(f"{_CSV.name} line {n}: is_tier1_city disagrees with the city")
        region = Region(row["region_code"], row["country"], row["province_or_state"] or None,
                        row["city"] or None, tier1)
        key = (row["vendor"].strip().casefold(), _norm(row["alias"]))
        if table.setdefault(key, region) != region:
            raise ValueError(f"{_CSV.name} line {n}: {key} maps to two regions")
    return table


@lru_cache(maxsize=1)
def _country_names() -> dict[str, str]:
    """ISO 3166 short, common and official names, normalized -> alpha-2: "italy" -> IT,
    "korea, republic of" and "south korea" -> KR (names only: a three-letter code such as
    "FRA" is Frankfurt's airport as often as France)."""
    names: dict[str, str] = {}
    for country in pycountry.countries:
        for name in (country.name, getattr(country, "common_name", None),
                     getattr(country, "official_name", None)):
            if name:
                names.setdefault(_norm(name), country.alpha_2)
    return names


def _lookup(key: str, vendor: str | None) -> Region | None:
    """Vendor row, else generic row; with no vendor, a vendor row only if all vendors agree."""
    table = _table()
    if vendor is not None:
        return table.get((vendor, key)) or table.get(("", key))
    if ("", key) in table:
        return table[("", key)]
    hits = {r for (v, alias), r in table.items() if alias == key}
    if len({(r.country, r.province_or_state, r.city) for r in hits}) > 1:
        owners = sorted(v for (v, alias) in table if alias == key)
        raise RegionParseError(
            f"region {key!r} (vendor None) means different places for {owners}; pass vendor=")
    return min(hits, key=lambda r: r.region_code) if hits else None


def _country_only(key: str, vendor: str | None) -> Region | None:
    """"Texas, US" / ", US" / "US" / "EU-PL-1": the country, with a known place when it agrees
    (vast.ai's states and provinces are vendor rows of regions.csv: "texas" -> Texas)."""
    place, _, cc = key.rpartition(",")
    cc = cc.strip().upper()
    if m := _DC_ID_RE.match(key):
        cc = {"us": "US", "ca": "CA"}.get(m["p"], m["c"].upper())
        place = ""
    elif not (len(cc) == 2 and (place or "," in key or key.upper() == cc)):
        return None
    if cc not in _ISO_COUNTRIES or cc in _NOT_A_COUNTRY:
        return None
    if place.strip():
        known = _lookup(_norm(place), vendor)
        if known is not None and known.country == cc:
            return Region(_code(key), cc, known.province_or_state, known.city, known.is_tier1_city)
        if state := _state(place, cc):
            return Region(_code(key), cc, state, None, False)
    return Region(_code(key), cc, None, None, False)


def _state(place: str, cc: str) -> str | None:
    """A US state or Canadian province by name or postal code, whatever the vendor: "texas" and
    "TX" -> Texas when the country after the comma is US."""
    states = _STATE_CODES.get(cc, {})
    place = " ".join(place.split())
    by_name = {name.lower(): name for name in states.values()}
    return states.get(place.upper()) or by_name.get(place.lower())


def resolve_region(text: str, vendor: str | None = None) -> Region:
    """Region text as the vendor writes it ("eastus", "cn-beijing", "内蒙B区", "Texas, US");
    `vendor`: the source's region key (its spider's `region_key`, regions.csv's vendor column)."""
    key, vkey = _norm(text or ""), region_key(vendor)
    if key == NO_LOCATION:
        raise RegionParseError(f"{NO_LOCATION} (vendor {vendor!r}): the offer cannot be placed")
    if key:
        spelling = _SPELLING_SUFFIX_RE.match(key)
        for candidate in (key, key.replace(" ", ""), spelling and spelling.group(1)):
            if candidate and (found := _lookup(candidate, vkey)):
                return found
        for zone_re in _ZONE_RES:
            m = zone_re.match(key)
            if m and (found := _lookup(m.group(1), vkey)):
                return Region(_code(text), found.country, found.province_or_state, found.city,
                              found.is_tier1_city)
        if found := _country_only(key, vkey):
            return found
        if cc := _country_names().get(key):
            return Region(_code(text), cc, None, None, False)
        if found := _one_of_a_list(text, key, vendor):
            return found
        if key in _AREAS:
            raise RegionParseError(f"region {text!r} is an area, not a country (vendor {vendor!r}):"
                                   " the listing does not say where the offer runs")
    raise RegionParseError(f"unknown region {text!r} for vendor {vendor!r}")


def _one_of_a_list(text: str, key: str, vendor: str | None) -> Region | None:
    """A list of places that are one place ("Frankfurt, Germany"; "Helsinki, Finland": the
    country, as "Somewhere, US" is), or None; several countries or areas raise, since an offer is
    placed in one country and the listing does not say which ("Finland, Iceland", "US/Europe")."""
    parts = [part for part in _LIST_RE.split(key) if part]
    if len(parts) < 2:
        return None
    places: list[Region | str | None] = []
    for part in parts:
        try:
            places.append(resolve_region(part, vendor))
        except RegionParseError:
            places.append("area" if part in _AREAS else None)
    regions = [place for place in places if isinstance(place, Region)]
    specific = {(r.province_or_state, r.city) for r in regions if r.province_or_state or r.city}
    if None not in places and ("area" in places or len({r.country for r in regions}) > 1
                               or len(specific) > 1):
        raise RegionParseError(
            f"region {text!r} names several places ({', '.join(_LIST_RE.split(text.strip()))}) "
            f"for vendor {vendor!r}: "
            "an offer is placed in one country, and the listing does not say which")
    if not regions or not isinstance(places[-1], Region) or len({r.country for r in regions}) > 1:
        return None
    best = next((r for r in regions if r.province_or_state or r.city), places[-1])
    return Region(_code(text), best.country, best.province_or_state, best.city, best.is_tier1_city)


def province_aliases() -> dict[str, str]:
    """Chinese and English province names (as spelled in regions.csv) -> English canonical name:
    "北京" -> "Beijing", "江苏" -> "Jiangsu", "内蒙古" -> "Inner Mongolia",
    "Guizhou" -> "Guizhou"."""
    table = _table()
    return {row["alias"]: region.province_or_state for row in _rows()
            if not row["vendor"] and (region := table[("", _norm(row["alias"]))]).province_or_state
            and region.country in ("CN", "HK", "MO")
            and region.city in (None, region.province_or_state)}
