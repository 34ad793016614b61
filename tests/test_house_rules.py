"""The house rules a newcomer relies on, checked on the source tree: files stay small, the
imports run one way (spiders never import pipelines; the product never imports the workshop or
anything else under tests/; no module imports itself through others), and SQL longer than one line
lives in .sql files, not in Python strings."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from spiders.layout import REPO_ROOT

PRODUCT = ("pipelines", "spiders")
# The workshop (make bench, make truth, the crash and overlap probes) lives under tests/ but keeps
# the product's rules: small files, no circles, SQL in .sql files.
WORKSHOP = "tests/workshop"
PACKAGES = (*PRODUCT, WORKSHOP)
MAX_LINES = 400
SQL_START = re.compile(r"^\s*(select|with|insert|update|delete|create|alter|drop|copy|merge)\b",
                       re.I)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            parts = path.relative_to(REPO_ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Project modules `name` imports at module level or inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    return {t for t in targets if t in MODULES and t != name}


def test_no_python_file_outside_tests_is_over_400_lines():
    long = {str(p.relative_to(REPO_ROOT)): n for p in MODULES.values()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"files over {MAX_LINES} lines: {long}"


def test_spiders_import_nothing_from_pipelines():
    crossing = {name: sorted(t for t in _imports(name, path) if t.startswith("pipelines"))
                for name, path in MODULES.items() if name.startswith("spiders")}
    assert not {k: v for k, v in crossing.items() if v}


def imports_of_tests(path: Path) -> list[str]:
    """What `path` imports from the `tests` package (the workshop is tests.workshop): import
    statements at any depth, and importlib.import_module / __import__ of a literal name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if node.level == 0 else []
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and (getattr(node.func, "attr", None) == "import_module"
                   or getattr(node.func, "id", None) in ("import_module", "__import__"))):
            names = [node.args[0].value]
        else:
            continue
        found += [f"{node.lineno}: {n}" for n in names if n == "tests" or n.startswith("tests.")]
    return found


def product_importers_of_tests(root: Path) -> dict[str, list[str]]:
    """{file: its imports of tests/} over every .py file of the product under `root`."""
    return {str(p.relative_to(root)): found for package in PRODUCT
            for p in sorted((root / package).rglob("*.py")) if (found := imports_of_tests(p))}


def test_the_product_imports_nothing_from_tests():
    """What a user's run imports stays in pipelines/ and spiders/: the workshop (tests/workshop/)
    and the test helpers are never among it."""
    assert (REPO_ROOT / WORKSHOP / "__init__.py").is_file(), "the workshop moved: update WORKSHOP"
    assert product_importers_of_tests(REPO_ROOT) == {}


@pytest.mark.parametrize(("source", "found"), [
    ("import tests.workshop.bench", ["1: tests.workshop.bench"]),
    ("from tests.workshop.truth import grid", ["1: tests.workshop.truth"]),
    ("from tests import workshop", ["1: tests"]),
    ("import os, tests.helpers.runs as runs", ["1: tests.helpers.runs"]),
    ("def f():\n    from tests.workshop.crash_loop import plan", ["2: tests.workshop.crash_loop"]),
    ("import importlib\nimportlib.import_module('tests.workshop.bench')",
     ["2: tests.workshop.bench"]),
    ("__import__('tests.workshop')", ["1: tests.workshop"]),
    ("from pipelines.simulate import simulate", []),
    ("import testsuite\nfrom pytest_tests import x", []),
    ("from . import tests", []),
    ("NAME = 'tests.workshop.bench'", []),
])
def test_an_import_of_tests_is_found(tmp_path, source, found):
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    assert imports_of_tests(path) == found


def test_a_planted_import_of_the_workshop_fails_the_rule(tmp_path):
    (tmp_path / "pipelines" / "report").mkdir(parents=True)
    (tmp_path / "spiders").mkdir()
    (tmp_path / "pipelines" / "report" / "clean.py").write_text("import duckdb\n", encoding="utf-8")
    (tmp_path / "spiders" / "probe.py").write_text(
        "def f():\n    from tests.workshop.overlap_probe import landed\n", encoding="utf-8")
    assert product_importers_of_tests(tmp_path) == {
        "spiders/probe.py": ["2: tests.workshop.overlap_probe"]}


def test_no_import_circle():
    """A module never reaches itself through the modules it imports (a package's __init__
    re-exporting its own submodules is not a circle: the arrow runs parent -> child)."""
    graph = {name: {t for t in _imports(name, path) if not name.startswith(f"{t}.")}
             for name, path in MODULES.items()}
    circles = []
    for start in graph:
        seen, todo = set(), [(start, (start,))]
        while todo:
            node, trail = todo.pop()
            for target in graph[node]:
                if target == start:
                    circles.append(" -> ".join((*trail, start)))
                elif target not in seen:
                    seen.add(target)
                    todo.append((target, (*trail, target)))
    assert not circles, circles[:5]


def _multiline_sql(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value for v in node.values
                           if isinstance(v, ast.Constant) and isinstance(v.value, str))
        else:
            continue
        if "\n" in text.strip() and SQL_START.match(text):
            lines.append(node.lineno)
    return sorted(set(lines))


def test_no_sql_statement_longer_than_one_line_in_python():
    found = {str(p.relative_to(REPO_ROOT)): lines for p in MODULES.values()
             if (lines := _multiline_sql(p))}
    assert not found, f"multi-line SQL in Python strings (move it to sql/*.sql): {found}"


@pytest.mark.parametrize("text", [
    'x = """select a\n  from b"""',
    'x = f"""\n  with t as (select 1)\n  select * from {name}"""',
])
def test_the_sql_rule_catches_sql_in_strings(tmp_path, text):
    path = tmp_path / "m.py"
    path.write_text(text, encoding="utf-8")
    assert _multiline_sql(path) == [1]


def test_the_circle_rule_sees_function_level_imports(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from spiders.layout import data_dir\n", encoding="utf-8")
    assert _imports("pipelines.example", path) == {"spiders.layout"}
