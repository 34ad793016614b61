"""The item boundary: every field of a raw offer (spiders/items.py, RawOffer) holds the JSON type
normalization reads it as, checked before any stage reads it. A wrong type (a JSON object where
the card's name belongs, a list as a count) is quarantined at stage "item" with a reason naming
the field and what it held, instead of failing deep in a parser as stage "error"
("TypeError: normalize() argument 2 must be str, not dict"). Pure: no I/O.

Unset (null or absent) is always allowed here: whether a field is required is the stages' call.
A field not of RawOffer (a backfill's provenance, pipelines/normalize/provenance.py) is left to
its own reader.
"""

from __future__ import annotations

from collections.abc import Mapping

from pipelines.normalize.quarantine import Quarantined

TEXT = (str,)
NUMBER = (int, float)          # JSON numbers; bool is excluded below (True is an int in Python)
NUMBER_OR_TEXT = (*NUMBER, str)  # a count or an amount, as a number or as written ("8", "1,299")
FLAG = (bool,)
OBJECT = (dict,)

# Each RawOffer field -> the JSON types it may hold (tests/pipelines/test_item_types.py checks
# that every field of RawOffer is here).
FIELD_TYPES: dict[str, tuple[type, ...]] = {
    **dict.fromkeys(("source", "vendor", "vendor_kind", "reaches_via", "local_time_zone",
                     "region_key", "sku", "gpu_text", "no_card_reason", "region_text",
                     "offer_kind", "price_text",
                     "currency", "billing_period", "url", "raw_ref", "observed_at",
                     "price_basis", "prices_as_of",
                     "effective_at", "config_text", "range_end", "vcpus_text", "memory_text",
                     "disk_text", "gpu_count_text", "accelerator_text", "price_unit",
                     "memory_unit", "disk_unit", "vram_unit", "plan_vram_unit"), TEXT),
    **dict.fromkeys(("gpu_count", "vram_gb", "price_amount", "price_low", "price_high",
                     "list_price_amount", "min_term_hours", "vcpus", "memory", "disk", "vram",
                     "plan_vram", "gpu_fraction"),
                    NUMBER_OR_TEXT),
    **dict.fromkeys(("available", "price_per_card", "price_of_machine", "tax_included"), FLAG),
    "vendor_data": OBJECT,
}
# How a reason names what a field held: JSON's words, not Python's.
JSON_NAMES = {dict: "an object", list: "an array", str: "text", bool: "true/false",
              int: "a number", float: "a number"}
EXPECTED = {TEXT: "text", NUMBER_OR_TEXT: "a number or text", FLAG: "true/false",
            OBJECT: "an object"}
SHOWN_CHARACTERS = 60


def json_name(value: object) -> str:
    return JSON_NAMES.get(type(value), type(value).__name__)


def shown(value: object) -> str:
    """`value` for a reason: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARACTERS else \
        f"{text[:SHOWN_CHARACTERS - 10]}... ({len(text)} characters)"


def holds(value: object, allowed: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in allowed
    return isinstance(value, allowed)


def type_problems(item: object) -> list[str]:
    """Every field of `item` whose value is not of its type, in words; [] when all are."""
    if not isinstance(item, Mapping):       # a dict, or the spiders' RawOffer (a scrapy Item)
        return [f"the item is {json_name(item)}, not an object: {shown(item)}"]
    problems = []
    for field, allowed in FIELD_TYPES.items():
        value = item.get(field)
        if value is not None and not holds(value, allowed):
            problems.append(f"{field} holds {json_name(value)} {shown(value)}, not "
                            f"{EXPECTED[allowed]}")
    return problems


def check_item_types(item: object) -> dict:
    """`item` when every field holds its type; Quarantined at stage "item" naming each field
    that does not (and what it held) otherwise."""
    problems = type_problems(item)
    if problems:
        raise Quarantined("item", "; ".join(problems))
    return item  # type: ignore[return-value]
