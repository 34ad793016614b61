"""The spider contract's import guard: no spider module (spiders/vendors, spiders/base) imports
what converts a unit, parses a price or reads a count out of a text; normalization alone calls
them (tests/spiders/test_spider_contract.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import spiders.parsing

# What no spider module imports: the helpers that convert a unit or parse a price, which
# normalization alone calls (module -> the names; None: the whole module).
CONVERTERS: dict[str, frozenset[str] | None] = {
    "spiders.parsing.units": None,
    "spiders.parsing.machine": None,
    # a count written in a text is normalization's to read (a sku's identity: row_ids.py)
    "spiders.parsing.counts": None,
    "spiders.parsing.prices": frozenset({"parse_price", "raw_price_fields", "per_hour",
                                         "parse_period", "HOURS_PER_PERIOD"}),
    "spiders.parsing.currencies": frozenset({"convert", "fx_rate", "SUB_UNITS"}),
}


def converter_imports(path: Path) -> list[str]:
    """Each import in the module at `path` of a unit converter or price parser (CONVERTERS)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "spiders.parsing":
            found += [f"{path.name}: from spiders.parsing import {a.name}" for a in node.names
                      if _reexported_converter(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module in CONVERTERS:
            banned = CONVERTERS[node.module]
            names = [a.name for a in node.names if banned is None or a.name in banned]
            found += [f"{path.name}: from {node.module} import {n}" for n in names]
        elif isinstance(node, ast.Import):
            found += [f"{path.name}: import {a.name}" for a in node.names if a.name in CONVERTERS]
    return found


def _reexported_converter(name: str) -> bool:
    """`from spiders.parsing import gpu_count_in_text`: a banned name the package re-exports, or
    a banned module imported by its name."""
    if f"spiders.parsing.{name}" in CONVERTERS:
        return CONVERTERS[f"spiders.parsing.{name}"] is None
    home = getattr(getattr(spiders.parsing, name, None), "__module__", None)
    if home not in CONVERTERS:
        return False
    banned = CONVERTERS[home]
    return banned is None or name in banned
