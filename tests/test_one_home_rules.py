"""Each rule has one home, outside the Dagster wiring (issue 26): no numeric constant used by a
check or a quarantine stage is defined under pipelines/defs/, and no rule is written there.

The rule, as the ast scan of pipelines/defs/**/*.py applies it:

1. No name is bound to a number, at module level, inside a function or as a parameter's
   default: a numeric literal, arithmetic on numbers, a tuple/list/dict of numbers, or a number
   made by Decimal/float/int/Fraction/timedelta (of a literal or of an environment variable's
   default, as `float(os.environ.get("X", "3"))`). A threshold or a factor takes that shape.
2. No numeric literal is written inline either (`len(others) < 2`, `timedelta(minutes=5)`,
   `{"window_hours": 72}`), except 0 and 1 (an empty count, a counter's step, one at a time),
   an index or slice (`fetchone()[0]`, `run_id[:8]`), and the value of a keyword that configures
   how Dagster runs a step (WIRING_KEYWORDS: retries, their delay, concurrency, timeouts).
3. No rule is constructed there: no `Quarantined(...)` raised, no quarantine row (a dict with a
   "stage" key), no Great Expectations expectation (`expect("Expect...", ...)`, `Expect(...)`).

The wiring's own numbers are allowed by name in WIRING_NUMBERS, each with why it is not a rule:
it says how the wiring reads or writes, and judges no offer, batch or source. Quarantine stages
live in pipelines/normalize/, checks' expectations and thresholds in pipelines/quality/; neither
package imports Dagster (or click)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from spiders.layout import REPO_ROOT

DEFS = REPO_ROOT / "pipelines" / "defs"
DOMAIN_PACKAGES = ("pipelines/normalize", "pipelines/quality")

# "<file under defs>:<name>" -> why the number is the wiring's, not a rule's.
WIRING_NUMBERS = {
    "ingest.py:MAX_LINE_BYTES": "the longest raw line DuckDB is told to read: a reading buffer, "
                                "not a judgement of the line (a longer one fails the load)",
    "advisor.py:ROWS_PER_WORKLOAD": "how many of the advisor's options per workload the table "
                                    "keeps: output size, no check or quarantine reads it",
}
WIRING_KEYWORDS = {"max_retries", "delay", "max_concurrent", "limit", "timeout",
                   "timeout_seconds"}
NUMBER_MAKERS = {"Decimal", "float", "int", "Fraction", "timedelta"}


def _numeric(node: ast.AST) -> bool:
    return (isinstance(node, ast.Constant) and isinstance(node.value, int | float | complex)
            and not isinstance(node.value, bool))


def _numeric_text(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return False
    try:
        float(node.value)
    except ValueError:
        return False
    return True


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def _env_default(node: ast.AST) -> bool:
    """os.environ.get("X", "3") / os.getenv("X", 3): an environment variable with a number as
    its default."""
    return (isinstance(node, ast.Call) and _call_name(node) in ("get", "getenv")
            and len(node.args) == 2 and (_numeric(node.args[1]) or _numeric_text(node.args[1])))


def is_number(node: ast.AST | None) -> bool:
    """Whether an expression is a number as a threshold is written (rule 1)."""
    if node is None:
        return False
    if _numeric(node) or _env_default(node):
        return True
    if isinstance(node, ast.UnaryOp):
        return is_number(node.operand)
    if isinstance(node, ast.BinOp):
        return (is_number(node.left) or is_number(node.right)) and all(
            is_number(side) or isinstance(side, ast.Name | ast.Attribute)
            for side in (node.left, node.right))
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return bool(node.elts) and all(is_number(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return bool(node.values) and all(is_number(v) for v in node.values)
    if isinstance(node, ast.Call) and _call_name(node) in NUMBER_MAKERS:
        values = [*node.args, *(k.value for k in node.keywords)]
        return bool(values) and all(is_number(v) or _numeric_text(v) for v in values)
    return False


def _bindings(tree: ast.AST):
    """(name, value) of every assignment and parameter default, at any level."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        yield name.id, node.value, node.lineno
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.target.id, node.value, node.lineno
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults,
                          strict=True),
                     *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                       if d is not None)]
            for arg, default in pairs:
                yield arg.arg, default, default.lineno


def _exempt(tree: ast.AST, allowed: set[str]) -> set[int]:
    """ids of the nodes where an inline number is not a rule: indexes and slices, the values of
    wiring keywords, and the values bound to an allowed wiring number."""
    exempt: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            exempt.update(id(n) for n in ast.walk(node.slice))
        elif isinstance(node, ast.keyword) and node.arg in WIRING_KEYWORDS:
            exempt.update(id(n) for n in ast.walk(node.value))
    for name, value, _ in _bindings(tree):
        if name in allowed and value is not None:
            exempt.update(id(n) for n in ast.walk(value))
    return exempt


def findings(source: str, label: str = "<source>") -> list[str]:
    """Every place in `source` (a module of pipelines/defs/) that breaks the rule above."""
    tree = ast.parse(source)
    allowed = {key.split(":", 1)[1] for key in WIRING_NUMBERS if key.split(":", 1)[0] == label}
    found = [f"{label}:{line}: {name} is bound to a number"
             for name, value, line in _bindings(tree) if name not in allowed and is_number(value)]
    exempt = _exempt(tree, allowed)
    for node in ast.walk(tree):
        if _numeric(node) and node.value not in (0, 1) and id(node) not in exempt:
            found.append(f"{label}:{node.lineno}: the number {node.value!r} written inline")
        elif isinstance(node, ast.Call) and _call_name(node) == "Quarantined":
            found.append(f"{label}:{node.lineno}: a quarantine stage raised here")
        elif isinstance(node, ast.Call) and (_call_name(node).startswith("Expect")
                                             or _call_name(node) == "expect"):
            found.append(f"{label}:{node.lineno}: an expectation built here")
        elif isinstance(node, ast.Dict) and any(
                isinstance(k, ast.Constant) and k.value == "stage" for k in node.keys):
            found.append(f"{label}:{node.lineno}: a quarantine row made here")
    return sorted(set(found))


def _defs_modules() -> dict[str, Path]:
    return {str(p.relative_to(DEFS)): p for p in sorted(DEFS.rglob("*.py"))}


def test_defs_define_no_threshold_factor_or_quarantine_stage():
    found = [f for label, path in _defs_modules().items()
             for f in findings(path.read_text(encoding="utf-8"), label)]
    assert not found, "rules belong in pipelines/normalize or pipelines/quality:\n" + "\n".join(
        found)


def test_every_allowed_wiring_number_still_exists():
    """An allowance for a number that moved or went away is stale: it would excuse the next
    number of that name."""
    modules = _defs_modules()
    stale = []
    for key in WIRING_NUMBERS:
        label, name = key.split(":", 1)
        tree = ast.parse(modules[label].read_text(encoding="utf-8")) if label in modules else None
        if tree is None or not any(n == name and is_number(v) for n, v, _ in _bindings(tree)):
            stale.append(key)
    assert not stale


@pytest.mark.parametrize("source, caught", [
    # the shapes a rule's number takes: caught
    ("CONSISTENCY_FACTOR = Decimal(4)", True),
    ("MIN_VOLUME_RATIO = 0.5", True),
    ("TRAILING_CRAWLS: int = 7", True),
    ("LIMIT = -3", True),
    ("MAX_BYTES = 1 << 20", True),
    ("BOUNDS = (Decimal('0.5'), Decimal('2'))", True),
    ("FRESHNESS_HOURS = float(os.environ.get('GPUPRICES_FRESHNESS_HOURS', '3'))", True),
    ("WINDOW = int(os.getenv('W', 72))", True),
    ("SKEW = timedelta(minutes=5)", True),
    ("def check(window_hours=72): pass", True),
    ("def check(*, share=0.5): pass", True),
    ("def f(rows):\n    factor = 4\n    return rows", True),
    ("if len(others) < 2: pass", True),
    ("x = con.execute(q, {'window_hours': 72})", True),
    ("until = now + timedelta(minutes=5)", True),
    ("raise Quarantined('dedupe', 'twice in one crawl hour')", True),
    ("rows.append({'stage': 'error', 'reason': str(exc)})", True),
    ("suite = [gxe.ExpectColumnValuesToBeBetween(column='gpu_count', min_value=1)]", True),
    ("suite = [expect('ExpectColumnValuesToBeBetween', column='gpu_count', min_value=1)]", True),
    ("suite = [Expect('ExpectColumnValuesToBeInSet', {'column': 'currency'})]", True),
    # the wiring's own numbers: not rules
    ("n = con.execute('select 1').fetchone()[0]", False),
    ("tag = run_id[:8]", False),
    ("counts[key] += 1", False),
    ("result = CrawlResult(source, crawl_id, False, 0)", False),
    ("config = {'tag_concurrency_limits': [{'key': 'k', 'value': 'v', 'limit': 1}]}", False),
    ("policy = dg.RetryPolicy(max_retries=3, delay=10)", False),
    ("PATH = Path(__file__).parents[1] / 'workloads.yaml'", False),
    ("NAME = 'observation_batch'", False),
    ("from pipelines.quality.thresholds import MIN_VOLUME_RATIO", False),
])
def test_the_scan_catches_a_rule_and_leaves_the_wiring(source, caught):
    assert bool(findings(source)) is caught, findings(source)


def test_an_allowed_wiring_number_is_allowed_only_in_its_own_file():
    source = "MAX_LINE_BYTES = 1 << 30\n"
    assert findings(source, "ingest.py") == []
    assert findings(source, "quality.py")


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("package", DOMAIN_PACKAGES)
def test_the_rule_packages_import_neither_dagster_nor_click(package):
    files = sorted((REPO_ROOT / package).rglob("*.py"))
    assert files, f"{package} has no modules"
    wired = {str(p.relative_to(REPO_ROOT)): sorted(roots)
             for p in files
             if (roots := _imported_roots(p) & {"dagster", "dagster_duckdb", "click"})}
    assert not wired
