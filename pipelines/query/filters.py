"""What a reader's card, region, vendor, kind, period and price ceiling mean against the data:
each read into SQL predicates over marts.latest_prices (values bound as parameters), with a note
of how it was read. Text nobody knows raises UnknownValueError, its message listing the known
values.

Card and place text are read by pipelines.lookup, as the advisor and the alert rules read them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pipelines.display import fold as spelling_key
from pipelines.display import fraction_text, without_controls
from pipelines.query.choices import KINDS, PERIODS
from pipelines.query.errors import UnknownValueError
from pipelines.warehouse.sql_files import not_held_predicate, sql_text


@dataclass
class Filter:
    """A reader's card/region/vendor/... read against the data: SQL predicates over
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


def offer_filter(con, card: str | None = None, region: str | None = None,
                 kind: str | None = None, period: str | None = None, vendor: str | None = None,
                 max_price: float | None = None) -> Filter:
    """Every filter of `gpuprices prices` and `pipelines.api.prices`, as predicates over
    marts.latest_prices: card, region, vendor (read against the data), kind and period (any
    spelling), at most `max_price` CNY per GPU-hour."""
    found = Filter()
    if card:
        card_filter(card, found)
    if region:
        region_filter(con, region, found)
    if vendor:
        vendor_filter(con, vendor, found)
    if kind:
        found.add("offer_kind = ?", [KINDS.read(kind, "kind")])
    if period:
        found.add("billing_period = ?", [PERIODS.read(period, "period")])
    if max_price is not None:
        found.add("price_per_gpu_hour_cny <= ?", [float(max_price)])
    return found


def held_filter(con, found: Filter) -> int:
    """Leave out the offers whose latest price is held back as a possible outlier (as
    marts.cheapest_offers and the alerts do); returns how many of the offers `found` matched so
    far are held."""
    not_held = not_held_predicate()
    held = con.execute(f"select count(*) from marts.latest_prices where ({found.sql}) "
                       f"and not ({not_held})", found.params).fetchone()[0]
    found.add(f"({not_held})", [])
    return held


def sql_in(column: str, values: Sequence) -> str:
    """`column in (?, ?, ...)`, one parameter per value."""
    return f"{column} in ({', '.join('?' for _ in values)})"


def day_bounds(column: str, since, until) -> tuple[list[str], list[str]]:
    """`column >= since` and `column <= until` (ISO dates or dates; None: no bound), as SQL
    conditions and their parameters: the history's and the index's day range."""
    where, params = [], []
    for bound, op in ((since, ">="), (until, "<=")):
        if bound is not None:
            where.append(f"{column} {op} ?::date")
            params.append(str(bound))
    return where, params


def card_filter(text: str, found: Filter) -> list[str]:
    """A card: a canonical model (`A100-80GB`), any vendor spelling the grammar reads
    (`a100-80g`, `RTX 4090D`, `H100 NVL`), or a family alone (`A100`, `4090`: every model of the
    family). A slice (`A100 1/4`, `A100 80G MIG 2g.20gb`) also filters the fraction. Returns the
    models. The reading is pipelines.lookup's, shared with the advisor and the alert rules."""
    from pipelines.lookup import LookupTextError, match_card

    try:
        card = match_card(text)
    except LookupTextError as exc:
        raise UnknownValueError(str(exc), "card") from None
    models = list(card.models)
    note = f"card {text} → {', '.join(models)}"
    if card.fraction is not None:
        note += f" (slice {fraction_text(card.fraction)})"
    found.add(sql_in("gpu_model", models), models, note)
    if card.fraction is not None:
        found.add("gpu_fraction = ?", [card.fraction])
    return models


def region_filter(con, text: str, found: Filter) -> None:
    """A region: a province or state (北京, Beijing, 内蒙古, Inner Mongolia, Virginia), a city
    (乌兰察布, Ulanqab), a country code (CN, US) or a vendor's region code (eastus, cn-beijing,
    内蒙B区), read by pipelines.lookup against the places the latest offers are in. A place
    matches every vendor's offers there; a code matches that code only."""
    from pipelines.lookup import KnownPlace, match_place, place_hint

    known = [KnownPlace(*row) for row in con.execute(sql_text(__file__, "offer_places"))
             .fetchall()]
    place = match_place(text, known)
    if place is None:
        raise UnknownValueError(f"unknown region {text!r}. {place_hint(known)} "
                                "(`gpuprices prices --format csv` lists them)", "region")
    found.add(sql_in(place.column, place.values), list(place.values),
              f"region {text} → {place.description}")


def vendor_filter(con, text: str, found: Filter) -> None:
    """A vendor: part of a vendor's name or of a source name (`azure`, `阿里云`, `idc_`)."""
    pairs = con.execute("select distinct vendor, source from marts.latest_prices order by 1, 2"
                        ).fetchall()
    key = spelling_key(text)
    if not any(key in spelling_key(v) or key in spelling_key(s) for v, s in pairs):
        known = without_controls(", ".join(f"{v} ({s})" for v, s in pairs))
        raise UnknownValueError(f"no vendor or source matches {text!r}. Known: {known}",
                                "vendor")
    found.add("(strpos(lower(vendor), ?) > 0 or strpos(lower(source), ?) > 0)", [key, key],
              f"vendor {text}")
