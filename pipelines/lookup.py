"""What a person types for a card or a place, read against the data: one reading shared by the
CLI's `--card` / `--region`, the advisor's `--region` and the alert rules' `regions`.

A card is a canonical model (`A100-80GB`), any vendor spelling the grammar reads (`a100-80g`,
`RTX 4090D`, `H100 NVL`), or a family alone (`A100`, `4090`: every model of the family); a slice
(`A100 1/4`) also names a fraction. A place is a province or state in Chinese or English (北京,
Beijing, 内蒙古, Inner Mongolia, Virginia), a city (乌兰察布, Ulanqab), a country code (CN, US) or
a vendor's region code (eastus, cn-beijing, 内蒙B区).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from pipelines.display import fold
from spiders.parsing.gpu_models import CANONICAL_MODELS, GpuParseError, gpu_family, parse_gpu
from spiders.parsing.regions import RegionParseError, province_aliases, resolve_region

_FAMILY_TOKENS = re.compile(r"nvidia|geforce|tesla|rtx|[ah]\s*[18]00|4090\s*d|4090", re.I)
_MEMORY = re.compile(r"(?<![\d.])\d+(?:\.\d+)?\s*(?:gib|gb|g)(?![a-z.])", re.I)
_HAN = re.compile(r"[\u4e00-\u9fff]+")


class LookupTextError(ValueError):
    """Text that names no known card or place; the message lists what is known."""


# -- cards ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CardMatch:
    models: tuple[str, ...]
    fraction: Decimal | None      # a slice (< 1) when the text names one, else None


def match_card(text: str) -> CardMatch:
    """The models (and slice) `text` names; LookupTextError when it names none."""
    exact = {m.casefold().replace("-", ""): m for m in CANONICAL_MODELS}
    key = re.sub(r"[\s_-]+", "", fold(text))
    if key in exact:
        return CardMatch((exact[key],), None)
    try:
        spec = parse_gpu(text)
    except GpuParseError as exc:
        raise LookupTextError(f"{exc}. Known cards: {', '.join(CANONICAL_MODELS)}, or a family: "
                              "A100, H100, H800, 4090, 4090D") from None
    family = gpu_family(spec.gpu_model)
    rest = _FAMILY_TOKENS.sub(" ", unicodedata.normalize("NFKC", text))
    # "A100" alone names the family; memory ("a100 80g") or a variant that fixes the memory
    # ("H100 NVL" = 94 GB) names one model. parse_gpu alone would read "A100" as the 40 GB card.
    if _MEMORY.search(rest) or spec.gpu_model != parse_gpu(family).gpu_model:
        models: tuple[str, ...] = (spec.gpu_model,)
    else:
        models = tuple(m for m in CANONICAL_MODELS if gpu_family(m) == family)
    fraction = Decimal(str(spec.gpu_fraction)) if spec.gpu_fraction < 1 else None
    return CardMatch(models, fraction)


# -- places ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class KnownPlace:
    """A place as the data lists it (one row of latest prices, or one offer)."""

    region_code: str | None
    country: str | None
    province_or_state: str | None
    city: str | None


@dataclass(frozen=True)
class Place:
    """How a place text was read: the column it filters and the value(s) it must equal."""

    column: str                   # province_or_state | city | country | region_code
    values: tuple[str, ...]
    what: str                     # "province/state", "city", "country", "region code"

    @property
    def description(self) -> str:
        return f"{self.what} {', '.join(self.values)}"

    def matches(self, place: KnownPlace) -> bool:
        value = getattr(place, self.column)
        if self.column == "region_code":
            return fold(value) in {fold(v) for v in self.values}
        return value in self.values


def _place(column: str, value: str) -> Place:
    what = {"province_or_state": "province/state", "city": "city", "country": "country"}[column]
    return Place(column, (value,), what)


def match_place(text: str, known: Iterable[KnownPlace] = ()) -> Place | None:
    """The place `text` names, read against the places the data lists (`known`, may be empty:
    then only names the region table knows are read). None when it names no place."""
    known = list(known)
    key = fold(text)
    provinces = {fold(alias): name for alias, name in province_aliases().items()}
    provinces.update({fold(k.province_or_state): k.province_or_state for k in known
                      if k.province_or_state and fold(k.province_or_state) not in provinces})
    if key in provinces:
        return _place("province_or_state", provinces[key])
    cities = {fold(k.city): k.city for k in known if k.city}
    if key in cities:
        return _place("city", cities[key])
    countries = {fold(k.country): k.country for k in known if k.country}
    if key in countries:
        return _place("country", countries[key])
    try:
        region = resolve_region(text)
    except RegionParseError:
        region = None
    stripped = text.strip()
    # A Chinese city name ("乌兰察布") is a place, though an IDC may also use it as its code.
    if region and region.city and _HAN.fullmatch(stripped) and not stripped.endswith("区"):
        return _place("city", region.city)
    codes: dict[str, list[str]] = {}
    for k in known:
        if k.region_code and k.region_code not in codes.setdefault(fold(k.region_code), []):
            codes[fold(k.region_code)].append(k.region_code)
    if key in codes:
        return Place("region_code", tuple(codes[key]), "region code")
    if region:   # other spellings of a place: 江苏省, 华北2（北京）, "Texas, US"
        if region.city and region.city != region.province_or_state:
            return _place("city", region.city)
        if region.province_or_state:
            return _place("province_or_state", region.province_or_state)
        return _place("country", region.country)
    return None


def place_hint(known: Iterable[KnownPlace] = ()) -> str:
    """What a person could have typed: provinces/states (with their Chinese names), countries,
    and how many vendor region codes exist."""
    known = list(known)
    chinese: dict[str, str] = {}
    for alias, name in province_aliases().items():
        if _HAN.fullmatch(alias):
            chinese.setdefault(name, alias)
    names = {k.province_or_state for k in known if k.province_or_state} or set(chinese)
    listed = ", ".join(f"{p} ({chinese[p]})" if p in chinese else p for p in sorted(names))
    countries = sorted({k.country for k in known if k.country})
    codes = {k.region_code for k in known if k.region_code}
    hint = f"Known provinces/states: {listed}"
    if countries:
        hint += f"; countries: {', '.join(countries)}"
    hint += "; or a city, a country code (CN, US)"
    if codes:
        hint += f" or one of {len(codes)} vendor region codes such as eastus, cn-beijing, 内蒙B区"
    return hint
