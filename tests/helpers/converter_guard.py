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


# What a spider module may not compute: a number from a money amount (arithmetic on a Decimal),
# or a number read out of a text by a regular expression (int/float/Decimal of a match's group).
# Normalization reads texts and does the arithmetic (spiders/items.py).
NUMBER_CASTS = {"int", "float", "Decimal"}
MATCH_CALLS = {"match", "fullmatch", "search"}


def _call_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    return None


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _assigned(tree: ast.AST, made_by: set[str], unpacked: set[str] = frozenset()) -> set[str]:
    """Names assigned (in any scope) from a call of one of `made_by`, or unpacked from one of
    `unpacked` (`a, b = m.groups()`)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.NamedExpr):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            calls = {_call_name(n) for n in ast.walk(node.value)}
            if calls & made_by:
                found |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            if isinstance(node.value, ast.Call) and _call_name(node.value) in unpacked:
                found |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return found


def computed_numbers(path: Path) -> list[str]:
    """Each place in the module at `path` that does arithmetic on a money amount (a Decimal) or
    casts a number a regular expression read out of a text."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    decimals = _assigned(tree, {"Decimal"})
    matches = _assigned(tree, MATCH_CALLS)
    groups = _assigned(tree, set(), {"groups"})
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            operands = [node.left, node.right]
            if any("Decimal" in {_call_name(n) for n in ast.walk(o)} or _names(o) & decimals
                   for o in operands):
                found.append(f"{path.name}:{node.lineno}: arithmetic on an amount: "
                             f"{ast.unparse(node)}")
        elif isinstance(node, ast.Call) and _call_name(node) in NUMBER_CASTS and node.args:
            arg = node.args[0]
            read = (_call_name(arg) == "group"
                    or (isinstance(arg, ast.Subscript) and _names(arg.value) & matches)
                    or (isinstance(arg, ast.Name) and arg.id in groups))
            if read:
                found.append(f"{path.name}:{node.lineno}: a number read out of a text: "
                             f"{ast.unparse(node)}")
    return found


# The computations computed_numbers finds that stay, each with why (module: the finding's text
# after its line number).
KNOWN_COMPUTATIONS = {
    "html_table.py": {"a number read out of a text: int(match.group(1))":
                      "availability(): '空闲 3/40' is in stock; a flag, not a price or count"},
    "aws.py": {"a number read out of a text: Decimal(match[0])":
               "spot_price(): tests a served numeric string for 'no price' (N/A, 0); the "
               "string goes on unchanged"},
    "gcp.py": {"arithmetic on an amount: Decimal(price.get('units') or 0) + "
               "Decimal(price.get('nanos') or 0) / 10 ** 9": "Money's units + nanos: not moved yet",
               "arithmetic on an amount: Decimal(price.get('nanos') or 0) / 10 ** 9":
               "Money's units + nanos: not moved yet"},
}


def unknown_computations(path: Path) -> list[str]:
    known = KNOWN_COMPUTATIONS.get(path.name, {})
    return [f for f in computed_numbers(path) if f.split(": ", 1)[1] not in known]
