"""Issue 26, the read side has one home (pipelines/query/): nothing under pipelines/ but the
command line imports click; the signal marts are listed once; `records` is defined once; the
latest prices have one sort order; the CLI's period choices are the parser's periods."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pipelines.query.prices import PRICE_ORDERS
from pipelines.query.signals import SIGNAL_MARTS

PIPELINES = Path(__file__).resolve().parents[1] / "pipelines"
# Not yet moved, each with the part of issue 26 that moves it: the check holds for everything
# else, and an entry may only leave this list.


def modules(under: Path = PIPELINES) -> dict[str, ast.Module]:
    return {path.relative_to(PIPELINES).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
            for path in sorted(under.rglob("*.py"))}


def imported(tree: ast.Module) -> set[str]:
    """Top-level package of every import in the module, at any depth (lazy imports too)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def _named(item: ast.expr | None) -> object:
    """A literal's value, or the first argument of a call (`View("spot_discount", ...)`)."""
    if isinstance(item, ast.Call) and item.args:
        item = item.args[0]
    return item.value if isinstance(item, ast.Constant) else None


def signal_lists(tree: ast.Module) -> list[int]:
    """Lines of the literal collections (tuple, list, set, dict keys) that hold two or more of
    the signal marts' names, bare or as "marts.<name>", as strings or as the first argument of
    the calls they list."""
    names = {s.name for s in SIGNAL_MARTS} | {s.table for s in SIGNAL_MARTS}
    found = []
    for node in ast.walk(tree):
        items = node.keys if isinstance(node, ast.Dict) else \
            node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else []
        held = {value for i in items if (value := _named(i)) in names}
        if len({n.removeprefix("marts.") for n in held}) >= 2:
            found.append(node.lineno)
    return found


def test_only_the_command_line_imports_click():
    importers = {name for name, tree in modules().items()
                 if not name.startswith("cli/") and "click" in imported(tree)}
    assert not importers, f"click outside pipelines/cli/: {sorted(importers)}"


def test_the_read_layer_imports_neither_click_nor_dagster():
    for name, tree in modules(PIPELINES / "query").items():
        assert not imported(tree) & {"click", "dagster", "dagster_duckdb"}, name


def test_the_signal_marts_are_listed_once():
    listing = {name: lines for name, tree in modules().items() if (lines := signal_lists(tree))}
    assert len(listing.pop("query/signals.py")) == 1     # SIGNAL_MARTS, the one list
    assert not listing, f"a second list of signal marts: {listing}"


@pytest.mark.parametrize(("source", "lists"), [
    ('X = ("spot_discount", "marts.month_end_dip")', 1),
    ('X = {"regional_discount": "day", "multi_gpu_discount": "day"}', 1),
    ('X = ["marts.spot_discount", "other"]', 0),
    ('X = ("spot_discount", "marts.spot_discount")', 0),     # one mart, twice
    ('X = (View("spot_discount", "t"), View("month_end_dip", "t", day="month"))', 1),
    ('X = (View(name="spot_discount"), View("other"))', 0),
])
def test_a_second_list_would_be_found(source, lists):
    assert len(signal_lists(ast.parse(source))) == lists


def test_records_is_defined_once():
    defined = {name for name, tree in modules().items() for node in ast.walk(tree)
               if isinstance(node, ast.FunctionDef) and node.name == "records"}
    assert defined == {"query/rows.py"}
    # a helper named after it may only delegate to it, not zip rows into dicts again
    for name, tree in modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.endswith("records") \
                    and name != "query/rows.py":
                assert "dict(zip(" not in ast.unparse(node), (name, node.name)


def test_the_latest_prices_have_one_sort_order():
    orders = set(PRICE_ORDERS.values())
    spelled = {name for name, tree in modules().items() for node in ast.walk(tree)
               if isinstance(node, ast.Constant) and node.value in orders}
    assert spelled == {"query/prices.py"}


def test_the_cli_s_periods_are_the_parser_s():
    from pipelines.cli.options import KINDS, PERIODS, SORTS
    from pipelines.normalize import OFFER_KINDS
    from spiders.parsing.prices import HOURS_PER_PERIOD

    assert list(PERIODS.choices) == list(HOURS_PER_PERIOD)    # quarter included
    assert list(KINDS.choices) == list(OFFER_KINDS)
    assert list(SORTS.choices) == list(PRICE_ORDERS)
