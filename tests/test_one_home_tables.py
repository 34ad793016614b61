"""One home for the lists the code used to keep by hand (issue 40, item 4): the names of the tables
Python writes (pipelines/warehouse/tables.py) and the mission families
(spiders/parsing/card_catalog.py MISSION_FAMILIES, which the models read through
mission_families()). The marts the report and the alerts read are derived from their SQL
(pipelines/warehouse/sql_reads.py), never listed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pipelines.warehouse import tables
from spiders.parsing.card_catalog import MISSION_FAMILIES

ROOT = Path(__file__).resolve().parents[1]
HOME = ROOT / "pipelines" / "warehouse" / "tables.py"
NAMES = {value for name, value in vars(tables).items() if name.isupper()}
# The product's code; the workshop (pipelines/tools) is leaving the package (issue 40, item 2).
SCANNED = [p for folder in ("pipelines", "spiders") for p in (ROOT / folder).rglob("*.py")
           if "tools" not in p.relative_to(ROOT).parts]
SQL_READ = r"\b(?:from|join|into|table|exists)\s+{}\b"


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                 ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}


def spelled_table_names(source: str) -> list[str]:
    """The names of NAMES a Python source spells: as a whole string, or read by SQL in one."""
    tree = ast.parse(source)
    skipped = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in skipped:
            found += [name for name in NAMES if node.value == name or re.search(
                SQL_READ.format(re.escape(name)), node.value, re.I)]
    return found


def test_the_tables_python_writes_are_named_in_one_place():
    spelled = {p.relative_to(ROOT).as_posix(): names for p in SCANNED if p != HOME
               if (names := spelled_table_names(p.read_text(encoding="utf-8")))}
    assert not spelled, "import the name from pipelines/warehouse/tables.py"


@pytest.mark.parametrize("source, found", [
    ('INDEX_TABLE = "marts.price_index"', ["marts.price_index"]),
    ('sql = "select * from marts.price_index where x"', ["marts.price_index"]),
    ('"""Appends to marts.price_index."""', []),                         # a docstring says it
    ('msg = "marts.price_index has no published day"', []),               # a message, not a read
])
def test_the_table_name_rule_sees_names_and_sql_reads(source, found):
    assert spelled_table_names(source) == found


def _family_lists(source: str) -> int:
    """How many tuple/list/set literals of `source` are the mission families."""
    return sum(1 for node in ast.walk(ast.parse(source))
               if isinstance(node, (ast.Tuple, ast.List, ast.Set))
               and {getattr(e, "value", None) for e in node.elts} == set(MISSION_FAMILIES))


def test_the_mission_families_are_listed_once():
    home = ROOT / "spiders" / "parsing" / "card_catalog.py"
    listed = [p.relative_to(ROOT).as_posix() for p in SCANNED
              if _family_lists(p.read_text(encoding="utf-8"))]
    assert listed == [home.relative_to(ROOT).as_posix()]
    in_sql = re.compile(r"\[\s*" + r"\s*,\s*".join(f"'{f}'" for f in MISSION_FAMILIES) + r"\s*\]")
    typed = [p.relative_to(ROOT).as_posix() for p in (ROOT / "dbt_like_sql").rglob("*.sql")
             if in_sql.search(p.read_text(encoding="utf-8"))]
    assert not typed, "read the families through mission_families()"


def test_the_models_read_the_families_from_their_home(con):
    from pipelines.warehouse.sql_models import create_mission_families_macro

    create_mission_families_macro(con)
    assert tuple(con.execute("select mission_families()").fetchone()[0]) == \
        tuple(sorted(MISSION_FAMILIES))
