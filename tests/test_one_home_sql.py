"""Issue 26, "derived SQL in the model graph": every .sql file has a name no other has, every one
is linted by `make lint`, and no threshold of a model (a number of its `params` CTE) is stated a
second time, as a literal, in another SQL or Python file."""

from __future__ import annotations

import ast
import re
import shlex
from collections import defaultdict
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp
from sqlglot.tokens import TokenType

ROOT = Path(__file__).resolve().parents[1]
# not the project's files: environments, data, caches
SKIPPED = {".git", ".venv", ".venv-audit", "data", ".dagster_home", "node_modules", "__pycache__"}
COMPARISONS = {TokenType.GT, TokenType.GTE, TokenType.LT, TokenType.LTE, TokenType.EQ,
               TokenType.NEQ}


def project_files(suffix: str) -> list[Path]:
    return sorted(p for p in ROOT.rglob(f"*{suffix}")
                  if not SKIPPED & set(p.relative_to(ROOT).parts[:-1]))


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# -- one name per SQL file ---------------------------------------------------------------------

def shared_names(paths: list[Path]) -> dict[str, list[str]]:
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        by_name[path.name].append(rel(path))
    return {name: found for name, found in by_name.items() if len(found) > 1}


# An alert rule's registry entry is named by its rule, which its alerts' keys carry
# (pipelines/alerts/registry.py): `month_end_dip` alerts on the mart of that name.
ALERT_REGISTRY = ROOT / "pipelines" / "alerts" / "registry"


def test_no_two_sql_files_share_a_name():
    assert project_files(".sql"), "no SQL file found: the scan is broken"
    assert shared_names([p for p in project_files(".sql") if p.parent != ALERT_REGISTRY]) == {}


def test_a_shared_name_is_found():
    paths = [ROOT / "pipelines/a/sql/x.sql", ROOT / "pipelines/b/sql/x.sql",
             ROOT / "dbt_like_sql/marts/y.sql"]
    assert shared_names(paths) == {"x.sql": ["pipelines/a/sql/x.sql", "pipelines/b/sql/x.sql"]}


# -- every SQL file linted ---------------------------------------------------------------------

def lint_targets(makefile: str) -> list[tuple[str | None, list[str]]]:
    """(--config file or None, paths) of each `sqlfluff lint` in the Makefile's lint recipe."""
    recipe = re.search(r"^lint:.*\n((?:\t.*\n?)+)", makefile, re.M)
    assert recipe, "the Makefile has no lint target"
    targets = []
    for line in recipe.group(1).splitlines():
        match = re.search(r"sqlfluff lint (.*?)(?:\|\||;|\\|$)", line)
        if not match:
            continue
        words = shlex.split(match.group(1))
        config = words[words.index("--config") + 1] if "--config" in words else None
        paths = [w for i, w in enumerate(words)
                 if not w.startswith("-") and (i == 0 or words[i - 1] != "--config")]
        targets.append((config, paths))
    return targets


def unlinted(sql_files: list[str], targets: list[tuple[str | None, list[str]]]) -> list[str]:
    roots = [p.rstrip("/") for _, paths in targets for p in paths]
    return [f for f in sql_files if not any(r in (".", f) or f.startswith(f"{r}/") for r in roots)]


def test_make_lint_lints_every_sql_file():
    targets = lint_targets((ROOT / "Makefile").read_text(encoding="utf-8"))
    assert unlinted([rel(p) for p in project_files(".sql")], targets) == []
    for config, _ in targets:
        assert config is None or (ROOT / config).is_file(), config


def test_a_file_outside_the_lint_paths_is_found():
    makefile = ("lint: setup\n\t@status=0; \\\n"
                "\t$(BIN)/sqlfluff lint dbt_like_sql || status=1; \\\n"
                "\t$(BIN)/sqlfluff lint --config .p pipelines/report || status=1; \\\n"
                "\texit $$status\n")
    assert lint_targets(makefile) == [(None, ["dbt_like_sql"]), (".p", ["pipelines/report"])]
    files = ["dbt_like_sql/marts/a.sql", "pipelines/report/sql/b.sql", "pipelines/alerts/sql/c.sql",
             "pipelines/reporting/sql/d.sql"]
    assert unlinted(files, lint_targets(makefile)) == ["pipelines/alerts/sql/c.sql",
                                                       "pipelines/reporting/sql/d.sql"]


# -- no threshold stated twice -----------------------------------------------------------------

def number(node: exp.Expression) -> float | None:
    if isinstance(node, exp.Neg):
        value = number(node.this)
        return None if value is None else -value
    if isinstance(node, exp.Literal) and node.is_number:
        return float(node.this)
    return None


def thresholds(sql: str) -> dict[str, tuple[float, set[str]]]:
    """{name: (value, columns)} of the numbers of a model's params CTE: each with the columns the
    model compares with it (`c.vendors >= p.min_vendors`: vendors), a literal compared with
    one of which elsewhere is the threshold again."""
    tree = sqlglot.parse_one(sql, dialect="duckdb")
    params = next((c for c in tree.find_all(exp.CTE) if c.alias_or_name == "params"), None)
    if params is None:
        return {}
    found = {}
    for select in params.this.selects:
        value = number(select.this) if isinstance(select, exp.Alias) else None
        if value is not None:
            found[select.alias_or_name] = (value, set())
    for node in tree.find_all(exp.GT, exp.GTE, exp.LT, exp.LTE, exp.EQ, exp.NEQ):
        for side, other in ((node.left, node.right), (node.right, node.left)):
            names = {c.name for c in side.find_all(exp.Column)} if side else set()
            if isinstance(other, exp.Column):
                for name in names & found.keys():
                    found[name][1].add(other.name)
    return found


def sql_tokens(sql: str) -> list:
    """Tokens, not a parse: the SQL that Python runs has parameters and templates."""
    return [t for t in sqlglot.tokenize(sql, read="duckdb") if t.token_type != TokenType.SEMICOLON]


def sql_copies(sql: str | list, name: str, value: float, columns: set[str]) -> bool:
    """Whether `sql` (or its sql_tokens) states the threshold: `<value> as <name>`, or
    `<column> <op> <value>` (either way round) for a column its home compares with it."""
    tokens = sql_tokens(sql) if isinstance(sql, str) else sql

    def is_value(t) -> bool:
        return t.token_type == TokenType.NUMBER and float(t.text) == value

    for i, t in enumerate(tokens):
        after = tokens[i + 1:i + 3]
        if (is_value(t) and len(after) == 2 and after[0].token_type == TokenType.ALIAS
                and after[1].text.lower() == name):
            return True
        if t.token_type in COMPARISONS and 0 < i < len(tokens) - 1:
            left, right = tokens[i - 1], tokens[i + 1]
            if ((left.text.lower() in columns and is_value(right))
                    or (right.text.lower() in columns and is_value(left))):
                return True
    return False


def python_copies(source: str | ast.AST, name: str, value: float) -> bool:
    """Whether Python source (or its tree) binds a number equal to the threshold to its name:
    `NAME = 0.02`, `f(name=0.02)` or `{"name": 0.02}` (any case)."""
    tree = ast.parse(source) if isinstance(source, str) else source

    def equal(node) -> bool:
        return (isinstance(node, ast.Constant) and isinstance(node.value, int | float)
                and not isinstance(node.value, bool) and float(node.value) == value)

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign) and equal(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                label = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
                if label.lower() == name:
                    return True
        if isinstance(node, ast.keyword) and node.arg and node.arg.lower() == name \
                and equal(node.value):
            return True
        if isinstance(node, ast.Dict):
            for key, item in zip(node.keys, node.values, strict=True):
                if (isinstance(key, ast.Constant) and str(key.value).lower() == name
                        and equal(item)):
                    return True
    return False


def copies_of_model_thresholds() -> set[tuple[str, str, str]]:
    homes = {rel(p): thresholds(p.read_text(encoding="utf-8"))
             for p in project_files(".sql") if rel(p).startswith("dbt_like_sql/")}
    sql = {rel(p): sql_tokens(p.read_text(encoding="utf-8")) for p in project_files(".sql")}
    python = {rel(p): ast.parse(p.read_text(encoding="utf-8")) for p in project_files(".py")
              if rel(p).split("/")[0] in ("pipelines", "spiders")}
    found = set()
    for home, rules in homes.items():
        for name, (value, columns) in rules.items():
            for path, text in sql.items():
                if path != home and sql_copies(text, name, value, columns | {name}):
                    found.add((home, name, path))
            for path, text in python.items():
                if python_copies(text, name, value):
                    found.add((home, name, path))
    return found


@pytest.fixture(scope="module")
def copies() -> set[tuple[str, str, str]]:
    return copies_of_model_thresholds()


def test_the_models_state_thresholds():
    homes = [thresholds(p.read_text(encoding="utf-8"))
             for p in (ROOT / "dbt_like_sql").glob("*/*.sql")]
    assert sum(len(h) for h in homes) >= 20, "the params CTEs were not read"


def test_no_model_threshold_is_stated_again(copies):
    assert copies == set(), "a model's threshold stated again: read it from its home model"


@pytest.mark.parametrize(("sql", "found"), [
    ("select 0.02 as same_price_tolerance", True),
    ("select 0.03 as same_price_tolerance", False),
    ("select 0.02 as other_tolerance", False),
    ("select * from t where t.vendors >= 3", True),
    ("select * from t where 3 <= vendors", True),
    ("select * from t where vendors >= $min_vendors", False),
    ("select * from t where vendors >= 4", False),
    ("select * from t where offers >= 3", False),
    ("insert into {table} select 3 as min_vendors", True),
])
def test_a_copy_in_sql_is_found(sql, found):
    home = ("with params as (select 3 as min_vendors, 0.02 as same_price_tolerance) "
            "select c.* from c, params as p where c.vendors >= p.min_vendors")
    rules = thresholds(home)
    assert rules["min_vendors"] == (3.0, {"vendors"})
    assert any(sql_copies(sql, name, value, columns | {name})
               for name, (value, columns) in rules.items()) is found


@pytest.mark.parametrize(("source", "found"), [
    ("SAME_PRICE_TOLERANCE = 0.02", True),
    ("same_price_tolerance: float = 0.02", True),
    ("run(con, same_price_tolerance=0.02)", True),
    ("params = {'same_price_tolerance': 0.02}", True),
    ("SAME_PRICE_TOLERANCE = 0.05", False),
    ("TOLERANCE = 0.02", False),
    ("same_price_tolerance = rules['same_price_tolerance']", False),
])
def test_a_copy_in_python_is_found(source, found):
    assert python_copies(source, "same_price_tolerance", 0.02) is found
