"""What a user's --card, --region and --vendor mean against the data: each read into SQL
predicates over marts.latest_prices (values bound as parameters), with a note of how it was read.

The region reading (`region_filter`) also exists in the advisor and the alerts; this is the CLI's.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

import click

from pipelines.cli.options import spelling_key
from pipelines.display import fraction_text, without_controls
from pipelines.warehouse.sql_files import sql_text


@dataclass
class Filter:
    """A user's --card/--region/--vendor read against the data: SQL predicates over
    marts.latest_prices, and a note of how each value was read (shown under the table)."""

    where: list[str] = field(default_factory=list)
    params: list = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, sql: str, params: Sequence, note: str | None = None) -> None:
        self.where.append(sql)
        self.params.extend(params)
        if note:
            self.notes.append(note)

    @property
    def sql(self) -> str:
        return " and ".join(self.where) or "true"


def sql_in(column: str, values: Sequence) -> str:
    """`column in (?, ?, ...)`, one parameter per value."""
    return f"{column} in ({', '.join('?' for _ in values)})"


_FAMILY_TOKENS = re.compile(r"nvidia|geforce|tesla|rtx|[ah]\s*[18]00|4090\s*d|4090", re.I)
_MEMORY = re.compile(r"(?<![\d.])\d+(?:\.\d+)?\s*(?:gib|gb|g)(?![a-z.])", re.I)
_CHINESE = re.compile(r"[\u4e00-\u9fff]+")


def card_filter(text: str, found: Filter) -> list[str]:
    """--card: a canonical model (`A100-80GB`), any vendor spelling `parse_gpu` reads (`a100-80g`,
    `RTX 4090D`, `H100 NVL`), or a family alone (`A100`, `4090`: every model of the family).
    A slice (`A100 1/4`, `A100 80G MIG 2g.20gb`) also filters the fraction. Returns the models."""
    from spiders.parsing.gpu_models import CANONICAL_MODELS, GpuParseError, gpu_family, parse_gpu

    known = ", ".join(CANONICAL_MODELS)
    exact = {m.casefold().replace("-", ""): m for m in CANONICAL_MODELS}
    key = re.sub(r"[\s_-]+", "", spelling_key(text))
    if key in exact:
        models, fraction = [exact[key]], None
    else:
        try:
            spec = parse_gpu(text)
        except GpuParseError as exc:
            raise click.BadParameter(f"{exc}. Known cards: {known}, or a family: A100, H100, "
                                     "H800, 4090, 4090D", param_hint="--card") from None
        family = gpu_family(spec.gpu_model)
        rest = _FAMILY_TOKENS.sub(" ", unicodedata.normalize("NFKC", text))
        # "A100" alone names the family; memory ("a100 80g") or a variant that fixes the memory
        # ("H100 NVL" = 94 GB) names one model. parse_gpu would read "A100" as the 40 GB card.
        if _MEMORY.search(rest) or spec.gpu_model != parse_gpu(family).gpu_model:
            models = [spec.gpu_model]
        else:
            models = [m for m in CANONICAL_MODELS if gpu_family(m) == family]
        fraction = spec.gpu_fraction if spec.gpu_fraction < 1 else None
    note = f"card {text} → {', '.join(models)}"
    if fraction is not None:
        note += f" (slice {fraction_text(fraction)})"
    found.add(sql_in("gpu_model", models), models, note)
    if fraction is not None:
        found.add("gpu_fraction = ?", [fraction])
    return models


def region_filter(con, text: str, found: Filter) -> None:
    """--region: a province or state (北京, Beijing, 内蒙古, Inner Mongolia, Virginia), a city
    (乌兰察布, Ulanqab), a country code (CN, US) or a vendor's region code (eastus, cn-beijing,
    内蒙B区). A place matches every vendor's offers there; a code matches that code only."""
    from spiders.parsing.regions import RegionParseError, province_aliases, resolve_region

    places = con.execute(sql_text(__file__, "region_places")).fetchall()
    key = spelling_key(text)
    aliases = {spelling_key(alias): name for alias, name in province_aliases().items()}
    provinces = {spelling_key(p): p for _, _, p, _ in places if p}
    cities = {spelling_key(c): c for *_, c in places if c}
    countries = {spelling_key(c): c for _, c, _, _ in places}
    codes: dict[str, list[str]] = {}
    for code, *_ in places:
        codes.setdefault(spelling_key(code), []).append(code)

    def place(column: str, value: str, what: str) -> None:
        found.add(f"{column} = ?", [value], f"region {text} → {what} {value}")

    if key in aliases or key in provinces:
        return place("province_or_state", aliases.get(key) or provinces[key], "province/state")
    if key in cities:
        return place("city", cities[key], "city")
    if key in countries:
        return place("country", countries[key], "country")
    try:
        region = resolve_region(text)
    except RegionParseError:
        region = None
    # A Chinese city name ("乌兰察布") is a place, though an IDC may also use it as its code.
    if region and region.city and _CHINESE.fullmatch(text.strip()) \
            and not text.strip().endswith("区"):
        return place("city", region.city, "city")
    if key in codes:
        return found.add(sql_in("region_code", codes[key]), codes[key],
                         f"region {text} → region code {', '.join(codes[key])}")
    if region:  # other spellings of a place: 江苏省, 华北2（北京）, "Texas, US"
        if region.city:
            return place("city", region.city, "city")
        if region.province_or_state:
            return place("province_or_state", region.province_or_state, "province/state")
        return place("country", region.country, "country")
    chinese = {}
    for alias, name in province_aliases().items():
        if _CHINESE.fullmatch(alias):
            chinese.setdefault(name, alias)
    listed = ", ".join(f"{p} ({chinese[p]})" if p in chinese else p
                       for p in sorted(set(provinces.values())))
    raise click.BadParameter(
        f"unknown region {text!r}. Known provinces/states: {listed}; countries: "
        f"{', '.join(sorted(set(countries.values())))}; or one of {len(codes)} vendor region "
        "codes such as eastus, cn-beijing, 内蒙B区 (`gpuprices prices --format csv` lists them)",
        param_hint="--region")


def vendor_filter(con, text: str, found: Filter) -> None:
    """--vendor: part of a vendor's name or of a source name (`azure`, `阿里云`, `idc_`)."""
    pairs = con.execute("select distinct vendor, source from marts.latest_prices order by 1, 2"
                        ).fetchall()
    key = spelling_key(text)
    if not any(key in spelling_key(v) or key in spelling_key(s) for v, s in pairs):
        known = without_controls(", ".join(f"{v} ({s})" for v, s in pairs))
        raise click.BadParameter(f"no vendor or source matches {text!r}. Known: {known}",
                                 param_hint="--vendor")
    found.add("(strpos(lower(vendor), ?) > 0 or strpos(lower(source), ?) > 0)", [key, key],
              f"vendor {text}")


def signal_scope(con, found: Filter) -> tuple[list[str], list[str], list[str]]:
    """The models, region codes and region groups (province in China, country elsewhere, as in
    staging.stg_observations) of the offers the filter matches: how the signal marts, which have
    no province or city column, are filtered."""
    rows = con.execute(f"{sql_text(__file__, 'signal_scope')} where {found.sql}",
                       found.params).fetchall()
    return (sorted({r[0] for r in rows}), sorted({r[1] for r in rows}),
            sorted({r[2] for r in rows}))
