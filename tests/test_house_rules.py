"""The house rules a newcomer relies on, checked on the source tree: files stay small, the
imports run one way (spiders never import pipelines; no module imports itself through others),
and SQL longer than one line lives in .sql files, not in Python strings."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from spiders.layout import REPO_ROOT

PACKAGES = ("pipelines", "spiders")
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
